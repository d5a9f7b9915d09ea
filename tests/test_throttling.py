"""ClientScopedRateThrottle: a fixed-window counter per client and scope."""

from pathlib import Path

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from core.api.throttling import ClientScopedRateThrottle
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def three_per_minute(monkeypatch):
    monkeypatch.setattr(ClientScopedRateThrottle, "THROTTLE_RATES", {"feedback": "3/min", "auth_failure": "20/min"})
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


# --- failed authentications, per client address and key prefix (issues 12 and 23) --------------------------------


@pytest.fixture
def auth_failures(monkeypatch):
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "auth_failure", "5/min")
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "sessions", "100/min")


def sessions_as(key: str, address: str = "198.51.100.7", scheme: str = "Api-Key"):
    return APIClient(REMOTE_ADDR=address).get("/api/sessions", HTTP_AUTHORIZATION=f"{scheme} {key}")


def test_guessed_secrets_of_one_key_from_one_address_are_throttled_before_they_are_checked(
    api_key, project, auth_failures, clock, django_assert_num_queries
):
    prefix = api_key.partition(".")[0]
    statuses = [sessions_as(f"{prefix}.guess{n}").status_code for n in range(40)]

    assert statuses == [401] * 5 + [429] * 35
    refused = sessions_as(f"{prefix}.guess999")
    assert refused.json()["error"]["code"] == "throttled"
    assert refused["Retry-After"] == "60"
    with django_assert_num_queries(0):  # not even the key's prefix is looked up
        assert sessions_as(f"{prefix}.guess998").status_code == 429
    assert sessions_as(api_key).status_code == 429  # the right secret must not be told from a wrong one


def test_one_bad_key_behind_a_shared_address_never_locks_out_another_valid_key(
    api_key, other_api_key, project, other_project, auth_failures, clock
):
    for _ in range(40):  # a misconfigured agent, retrying with its wrong key
        sessions_as("misconfigured.secret")

    assert sessions_as("misconfigured.secret").status_code == 429
    assert sessions_as(api_key).status_code == 200  # another agent, same egress address
    assert sessions_as(other_api_key).status_code == 200
    assert sessions_as("misconfigured.secret", address="203.0.113.9").status_code == 401
    clock[0] += 60
    assert sessions_as("misconfigured.secret").status_code == 401


def test_successful_authentications_are_not_counted(api_key, project, auth_failures, clock):
    assert [sessions_as(api_key).status_code for _ in range(20)] == [200] * 20

    assert sessions_as("guess000.secret").status_code == 401


def test_bad_feedback_tokens_count_as_failures_too(api_key, project, auth_failures, clock, monkeypatch):
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "feedback", "100/min")
    client = APIClient(REMOTE_ADDR="198.51.100.7")
    statuses = [
        client.post(
            "/api/feedback",
            {"sessionId": "s-1", "feedback": "useful"},
            format="json",
            HTTP_AUTHORIZATION=f"Feedback-Token forged-{n}",
        ).status_code
        for n in range(7)
    ]

    assert statuses == [401] * 5 + [429] * 2
    assert sessions_as("guess000.secret").status_code == 401  # API keys are counted on their own


def test_the_default_budget_of_failed_authentications(settings):
    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["auth_failure"] == "20/min"


# --- one scope, one budget (issue 12, 5) --------------------------------------------------------

SCOPES = {
    "ingestion": lambda client: client.post("/api/sessions", {}, format="json"),
    "sessions": lambda client: client.get("/api/sessions"),
    "trace": lambda client: client.get("/api/trace/s-1"),
    "cases": lambda client: client.get("/api/cases"),
    "evolution": lambda client: client.post("/api/evolution/verify", {}, format="json"),
    "thresholds": lambda client: client.get("/api/evolution/thresholds"),
    "feedback_token": lambda client: client.post("/api/sessions/s-1/feedback-token", {}, format="json"),
    "feedback": lambda client: client.post("/api/feedback", {}, format="json"),
    "otlp": lambda client: client.post("/v1/traces", b"", content_type="application/x-protobuf"),
}


@pytest.mark.parametrize("scope", sorted(SCOPES))
def test_each_endpoint_spends_its_own_scopes_budget_only(api, project, clock, monkeypatch, scope):
    for name in SCOPES:
        monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, name, "1/min" if name == scope else "100/min")

    assert SCOPES[scope](api).status_code != 429
    assert SCOPES[scope](api).status_code == 429
    for other, call in SCOPES.items():
        if other != scope:
            assert call(api).status_code != 429, other


def test_every_scope_has_a_documented_budget(settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    readme = (Path(settings.BASE_DIR) / "docs" / "operations.md").read_text(encoding="utf-8")

    assert set(SCOPES) | {"auth_failure"} == set(rates)
    for scope in rates:
        assert f"THROTTLE_{scope.upper()}" in readme or scope == "auth_failure", scope
    assert "THROTTLE_AUTH_FAILURES" in readme


def test_counters_are_keyed_by_the_keys_prefix_never_its_stored_hash(api_key, project):
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from core.tenancy.models import ProjectAPIKey

    key = ProjectAPIKey.objects.get(project=project)
    request = Request(APIRequestFactory().get("/api/sessions"))
    request._authenticator, request._user, request._auth = None, None, key
    throttle = ClientScopedRateThrottle()
    throttle.scope = "sessions"

    cache_key = throttle.get_cache_key(request, view=None)

    assert cache_key == f"throttle_sessions_key:{key.prefix}"
    assert key.hashed_key not in cache_key and key.pk not in cache_key


# --- RateLimit headers (draft-ietf-httpapi-ratelimit-headers-10) -------------------------------------------------


def test_every_answer_says_the_budget_left_in_its_scopes_window(api, project, clock):
    make_session(project)
    clock[0] += 18  # 42 seconds left of the window

    answers = [vote(api) for _ in range(4)]

    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert {answer["RateLimit-Policy"] for answer in answers} == {'"feedback";q=3;w=60'}
    assert [answer["RateLimit"] for answer in answers] == [
        '"feedback";r=2;t=42',
        '"feedback";r=1;t=42',
        '"feedback";r=0;t=42',
        '"feedback";r=0;t=42',
    ]
    assert answers[-1]["Retry-After"] == "42"


@pytest.mark.parametrize("scope", sorted(SCOPES))
def test_each_scope_names_its_own_policy(api, project, clock, monkeypatch, scope):
    for number, name in enumerate(sorted(SCOPES), start=10):
        monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, name, f"{number}/min")
    quota = 10 + sorted(SCOPES).index(scope)

    response = SCOPES[scope](api)

    assert response["RateLimit-Policy"] == f'"{scope}";q={quota};w=60'
    assert response["RateLimit"] == f'"{scope}";r={quota - 1};t=60'


def test_a_refused_credential_says_its_own_budget_and_an_unchecked_one_none(api_key, project, auth_failures, clock):
    prefix = api_key.partition(".")[0]
    first = sessions_as(f"{prefix}.guess")
    for n in range(5):
        sessions_as(f"{prefix}.guess{n}")

    refused = sessions_as(f"{prefix}.guess-again")

    assert first.status_code == 401 and "RateLimit" not in first  # refused before any budget was counted
    assert refused.status_code == 429
    assert (refused["RateLimit-Policy"], refused["RateLimit"]) == ('"auth_failure";q=5;w=60', '"auth_failure";r=0;t=60')
    assert refused["Retry-After"] == "60"


def test_pages_outside_the_api_carry_no_rate_limit(client):
    assert "RateLimit" not in client.get("/healthz")
