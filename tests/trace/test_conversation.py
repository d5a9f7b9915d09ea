"""Conversations: a session is one turn; the turns sharing a conversationId are listed on each trace,
feedback stays on the turn it was given for, and nothing crosses projects."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import clock
from tests.factories import chat_payload, session_ingest
from tests.feedback.helpers import post_json

pytestmark = pytest.mark.django_db

QUESTIONS = ("订单服务 5xx 突增，原因是什么？", "连接池为什么会耗尽？", "怎么修复？")


def turn(project, n: int, conversation_id: str = "conv-1"):
    """Turn `n` of the conversation, asked a minute after the one before."""
    asked = clock.ago(minutes=10 - n)
    return session_ingest(
        project,
        chat_payload(
            sessionId=f"turn-{n}",
            conversationId=conversation_id,
            query=QUESTIONS[n - 1],
            createdAt=clock.iso(asked),
            finishedAt=clock.iso(asked + dt.timedelta(seconds=9)),
        ),
    )


def three_turns(project) -> list:
    return [turn(project, n) for n in (1, 2, 3)]


def test_each_turn_lists_the_conversation_with_itself_marked(api, project):
    three_turns(project)

    body = api.get("/api/trace/turn-2").json()

    conversation = body["conversation"]
    assert conversation["conversationId"] == "conv-1"
    assert [(turn["sessionId"], turn["query"], turn["current"]) for turn in conversation["turns"]] == [
        ("turn-1", QUESTIONS[0], False),
        ("turn-2", QUESTIONS[1], True),
        ("turn-3", QUESTIONS[2], False),
    ]
    assert body["session"]["conversationId"] == "conv-1"


def test_feedback_stays_on_the_turn_it_was_given_for(api, project):
    three_turns(project)

    answer = post_json(api, "/api/feedback", {"sessionId": "turn-1", "feedback": "not_useful"})

    assert answer.status_code == 200
    turns = api.get("/api/trace/turn-3").json()["conversation"]["turns"]
    assert [turn["feedback"] for turn in turns] == ["not_useful", None, None]
    assert api.get("/api/trace/turn-3").json()["feedback"] is None


def test_a_replayed_turn_keeps_its_place_and_the_others(api, project):
    turns = three_turns(project)
    # The agent sends turn 2 again (a retry or a late answer): it replaces turn 2 only.
    replayed = turn(project, 2)

    assert replayed.pk == turns[1].pk
    listed = api.get("/api/trace/turn-1").json()["conversation"]["turns"]
    assert [turn["sessionId"] for turn in listed] == ["turn-1", "turn-2", "turn-3"]


def test_another_projects_turns_with_the_same_conversation_id_are_not_listed(api, project, other_project):
    three_turns(project)
    session_ingest(other_project, chat_payload(sessionId="theirs", conversationId="conv-1"))

    listed = api.get("/api/trace/turn-1").json()["conversation"]["turns"]

    assert "theirs" not in [turn["sessionId"] for turn in listed] and len(listed) == 3


def test_a_session_outside_any_conversation_has_none_and_the_turns_cost_one_query(api, project):
    session_ingest(project, chat_payload(sessionId="alone"))
    three_turns(project)
    api.get("/api/trace/alone")  # the key is verified and cached once
    api.get("/api/trace/turn-1")

    # Answered from the cache: the session's version, and for a turn its conversation's turns.
    with CaptureQueriesContext(connection) as alone:
        body = api.get("/api/trace/alone").json()
    with CaptureQueriesContext(connection) as in_conversation:
        assert len(api.get("/api/trace/turn-1").json()["conversation"]["turns"]) == 3

    assert body["conversation"] is None and body["session"]["conversationId"] is None
    assert len(in_conversation) == len(alone) + 1  # the turns, one query however many


def test_turns_are_capped(api, project, settings):
    settings.SELFEVAL_TRACE_CONVERSATION_TURNS = 2
    three_turns(project)

    listed = api.get("/api/trace/turn-3").json()["conversation"]["turns"]

    assert [turn["sessionId"] for turn in listed] == ["turn-1", "turn-2"]
