"""ClientScopedRateThrottle: a fixed-window counter per client and scope."""

import pytest
from django.core.cache import cache

from selfeval_site.api.throttling import ClientScopedRateThrottle
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def three_per_minute(monkeypatch):
    monkeypatch.setattr(ClientScopedRateThrottle, "THROTTLE_RATES", {"feedback": "3/min"})
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def clock(monkeypatch):
    now = [600.0]  # the start of a one-minute window
    monkeypatch.setattr(ClientScopedRateThrottle, "timer", lambda self: now[0])
    return now


def vote(client):
    return post_json(client, "/api/feedback", {"sessionId": "s-20261129-0001", "feedback": "useful"})


def test_rate_is_enforced_per_client(api, other_api, project, other_project, clock):
    make_session(project)
    make_session(other_project)

    statuses = [vote(api).status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    assert vote(other_api).status_code == 200  # another key has its own counter


def test_throttled_answer_says_when_to_retry(api, project, clock):
    make_session(project)
    for _ in range(3):
        vote(api)
    clock[0] += 20

    response = vote(api)

    assert response.status_code == 429
    assert response["Retry-After"] == "40"  # the rest of the window


def test_a_new_window_starts_a_new_count(api, project, clock):
    make_session(project)
    assert [vote(api).status_code for _ in range(4)] == [200, 200, 200, 429]
    clock[0] += 60

    assert vote(api).status_code == 200


def test_an_expired_counter_is_started_again(api, project, clock):
    make_session(project)
    vote(api)
    cache.clear()  # the cache dropped the counter (eviction or expiry)

    assert [vote(api).status_code for _ in range(3)] == [200, 200, 200]
    assert vote(api).status_code == 429
