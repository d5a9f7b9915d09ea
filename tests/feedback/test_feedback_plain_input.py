"""The view's shortcut around FeedbackInputSerializer never accepts what the serializer would not,
and accepts exactly the data the serializer would produce."""

import pytest

from feedback.api import _plain_input
from feedback.serializers import FeedbackInputSerializer

BODIES = [
    {"sessionId": "s-1", "feedback": "useful"},
    {"sessionId": "s-1", "feedback": "not_useful", "comment": "准", "reviewer": "ops-li"},
    {"sessionId": "s-1", "feedback": "useful", "comment": "", "reviewer": ""},
    {"sessionId": "s-1", "feedback": "useful", "extra": 1},
    {"sessionId": "s" * 128, "feedback": "useful"},
    {"sessionId": "s" * 129, "feedback": "useful"},
    {"sessionId": " s-1 ", "feedback": "useful"},
    {"sessionId": "s 1", "feedback": "useful"},
    {"sessionId": "s-1\n", "feedback": "useful"},
    {"sessionId": "", "feedback": "useful"},
    {"sessionId": "s\x00", "feedback": "useful"},
    {"sessionId": "s\ud800", "feedback": "useful"},
    {"sessionId": 1, "feedback": "useful"},
    {"sessionId": None, "feedback": "useful"},
    {"sessionId": "s-1", "feedback": "meh"},
    {"sessionId": "s-1", "feedback": ["useful"]},
    {"sessionId": "s-1", "feedback": "USEFUL"},
    {"sessionId": "s-1"},
    {"feedback": "useful"},
    {"sessionId": "s-1", "feedback": "useful", "comment": None},
    {"sessionId": "s-1", "feedback": "useful", "comment": 3},
    {"sessionId": "s-1", "feedback": "useful", "comment": " padded "},
    {"sessionId": "s-1", "feedback": "useful", "comment": "x" * 5000},
    {"sessionId": "s-1", "feedback": "useful", "comment": "x" * 5001},
    {"sessionId": "s-1", "feedback": "useful", "comment": "a\x00b"},
    {"sessionId": "s-1", "feedback": "useful", "reviewer": "r" * 151},
    {"sessionId": "s-1", "feedback": "useful", "project": "p"},
    ["s-1", "useful"],
    "useful",
    None,
]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_shortcut_agrees_with_the_serializer(body):
    serializer = FeedbackInputSerializer(data=body)
    valid = serializer.is_valid()

    shortcut = _plain_input(body)

    if shortcut is not None:
        assert valid
        assert shortcut == dict(serializer.validated_data)


def test_shortcut_takes_the_ordinary_bodies():
    assert _plain_input(BODIES[0]) is not None
    assert _plain_input(BODIES[1]) is not None
