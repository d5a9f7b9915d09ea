"""POST /api/feedback with an Idempotency-Key: a retried vote is stored once and answered as the first time."""

import datetime as dt
import json
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from cases.models import BadCase, Case
from core.api.models import IdempotencyRecord
from feedback.models import FeedbackEvent
from tests import clock
from tests.factories import make_api_key
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
KEY = "9b7f7c1e-3a43-4c36-a5f5-0c8f1a7e2d11"


@pytest.fixture
def session(project):
    return make_session(project)


def vote(client, key: str | None = KEY, *, value="useful", session_id="s-20261129-0001", **extra):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return post_json(client, URL, {"sessionId": session_id, "feedback": value, **extra}, **headers)


def test_a_retry_gets_the_stored_answer_and_writes_nothing(api, session):
    first = vote(api)
    retry = vote(api)

    assert first.status_code == retry.status_code == 200
    assert (
        retry.json() == first.json() == {"success": True, "message": "反馈已记录", "caseId": str(Case.objects.get().pk)}
    )
    assert FeedbackEvent.objects.count() == 1
    record = IdempotencyRecord.objects.get()
    assert (record.key, record.response_status, json.loads(record.response_body)) == (KEY, 200, first.json())
    assert retry.content == first.content  # the same bytes, not only the same JSON


def test_a_retried_not_useful_vote_counts_once_on_the_bad_case(api, session):
    for _ in range(3):
        assert vote(api, value="not_useful").status_code == 200

    assert FeedbackEvent.objects.count() == 1
    assert BadCase.objects.get().feedback_count == 1


def test_the_same_body_in_other_bytes_is_the_same_request(api, session):
    vote(api, comment="")  # a default spelled out
    spaced = api.post(
        URL,
        data='{ "feedback" : "useful",\n  "sessionId": "s-20261129-0001" }',  # other order and whitespace
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=f'"{KEY}"',  # the draft's Structured Field string: the same key
    )

    assert spaced.status_code == 200
    assert FeedbackEvent.objects.count() == 1


@pytest.mark.parametrize(
    "change", [{"value": "not_useful"}, {"comment": "a new comment"}, {"session_id": "s-other"}, {"reviewer": "li"}]
)
def test_the_key_with_another_body_is_422(api, project, session, change):
    make_session(project, sessionId="s-other")
    vote(api)

    response = vote(api, **change)

    assert response.status_code == 422
    body = response.json()
    assert body["success"] is False
    assert f"Idempotency-Key '{KEY}' was already used with another request" in body["message"]
    assert FeedbackEvent.objects.count() == 1


def test_keys_belong_to_their_client(api, client_for, project, session, superuser):
    second_key_of_the_project = client_for(make_api_key(project, name="second-agent"))
    staff = APIClient()
    staff.force_authenticate(superuser)

    for client in (api, second_key_of_the_project, staff):
        assert vote(client, value="not_useful").status_code == 200

    assert FeedbackEvent.objects.count() == 3
    assert sorted(IdempotencyRecord.objects.values_list("client", flat=True)) == sorted(
        [f"key:{pk}" for pk in project.api_keys.values_list("pk", flat=True)] + [f"user:{superuser.pk}"]
    )


def test_an_end_users_token_keys_are_the_end_users(api, session):
    token = api.post("/api/sessions/s-20261129-0001/feedback-token", {"endUserId": "u-42"}, format="json").json()
    browser = APIClient()
    browser.credentials(HTTP_AUTHORIZATION=f"Feedback-Token {token['token']}")

    first, retry = vote(browser, value="not_useful"), vote(browser, value="not_useful")
    conflicting = vote(browser, value="useful")

    assert first.status_code == retry.status_code == 200
    assert conflicting.status_code == 422
    assert IdempotencyRecord.objects.get().client == f"enduser:{session.project_id}/u-42"


def test_without_a_key_every_vote_is_recorded(api, session):
    vote(api, key=None)
    vote(api, key=None)

    assert FeedbackEvent.objects.count() == 2
    assert not IdempotencyRecord.objects.exists()


def test_a_failed_request_is_not_stored_and_may_be_retried(api, project):
    assert vote(api).status_code == 404  # the session is not there yet
    assert not IdempotencyRecord.objects.exists()
    make_session(project)

    assert vote(api).status_code == 200
    assert FeedbackEvent.objects.count() == 1


def test_an_expired_key_starts_afresh(api, session, settings):
    vote(api)

    with time_machine.travel(clock.now() + dt.timedelta(seconds=settings.SELFEVAL_IDEMPOTENCY_KEY_TTL + 1)):
        response = vote(api, value="not_useful")  # another body: no 422 once the key expired

    assert response.status_code == 200
    assert FeedbackEvent.objects.count() == 2
    record = IdempotencyRecord.objects.get()
    assert json.loads(record.response_body)["caseId"] is None and record.expires_at > clock.now() + dt.timedelta(
        hours=23
    )


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("", "must not be empty"),
        ('""', "must not be empty"),
        ("k" * 256, "at most 255 characters"),
        ("naïve-key".encode().decode("latin-1"), "printable ASCII characters only"),
        ('"unterminated', "a quoted key must be a valid Structured Field string"),
        ('"bad \\escape"', "a quoted key must be a valid Structured Field string"),
    ],
)
def test_a_malformed_key_is_400(api, session, header, reason):
    response = vote(api, key=header)

    assert response.status_code == 400
    assert response.json() == {"success": False, "message": f"Idempotency-Key: Invalid header: {reason}."}
    assert not FeedbackEvent.objects.exists()


def test_the_longest_key_is_accepted(api, session):
    assert vote(api, key="k" * 255).status_code == 200


def test_query_counts_with_a_key(api, session, django_assert_num_queries):
    vote(api, key="warm-up")  # the case exists from now on, and the API key is in the cache
    # The vote's 4 statements (see test_feedback_api) plus the key: SAVEPOINT, INSERT, RELEASE, UPDATE.
    with django_assert_num_queries(8):
        assert vote(api).status_code == 200
    # A replay: the INSERT refused in its savepoint (SAVEPOINT, INSERT, ROLLBACK TO, RELEASE), then the
    # stored answer read under lock; nothing written.
    with django_assert_num_queries(7):
        assert vote(api).status_code == 200


def test_purge_deletes_only_expired_records(api, session, settings):
    vote(api, key="old")
    with time_machine.travel(clock.now() + dt.timedelta(hours=20)):
        vote(api, key="recent")
    out = StringIO()

    with time_machine.travel(clock.now() + dt.timedelta(seconds=settings.SELFEVAL_IDEMPOTENCY_KEY_TTL + 60)):
        call_command("purge_idempotency_keys", stdout=out)

    assert out.getvalue().strip() == "1 expired idempotency record(s) deleted"
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["recent"]


def test_the_schema_documents_the_header_and_the_422():
    operation = SchemaGenerator().get_schema(request=None, public=True)["paths"]["/api/feedback"]["post"]

    header = next(p for p in operation["parameters"] if p["name"] == "Idempotency-Key")
    assert header["in"] == "header" and not header.get("required", False)
    assert "422" in header["description"] and "24 hours" in header["description"]
    assert "422" in operation["responses"]
    assert "Idempotency-Key" in operation["description"]


def test_an_invalid_body_with_a_key_stores_nothing(api, session):
    response = api.post(URL, data=json.dumps([1]), content_type="application/json", HTTP_IDEMPOTENCY_KEY=KEY)

    assert response.status_code == 400
    assert not IdempotencyRecord.objects.exists()
