"""Under concurrent feedback for one session: one case, one open bad case, one event per Idempotency-Key
(PostgreSQL, real threads)."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from cases.models import BadCase, Case
from core.api.models import IdempotencyRecord
from feedback.models import FeedbackEvent
from tests.feedback.helpers import make_session

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CONCURRENCY = 50


def hammer(api_key: str, value: str | list[str], *, idempotency_key: str = "") -> list[tuple[int, dict]]:
    """CONCURRENCY requests released at once, each thread on its own database connection.

    `value` is every request's feedback, or one per request."""
    barrier = threading.Barrier(CONCURRENCY)
    values = value if isinstance(value, list) else [value] * CONCURRENCY
    headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key else {}

    def submit(index: int) -> tuple[int, dict]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
        try:
            barrier.wait(timeout=30)
            response = client.post(
                "/api/feedback",
                data=json.dumps({"sessionId": "s-20261129-0001", "feedback": values[index]}),
                content_type="application/json",
                **headers,
            )
            return response.status_code, response.json()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        return list(pool.map(submit, range(CONCURRENCY)))


def test_concurrent_useful_feedback_creates_exactly_one_case(project, api_key):
    session = make_session(project)

    results = hammer(api_key, "useful")

    assert [status for status, _ in results] == [200] * CONCURRENCY
    case_ids = {body["caseId"] for _, body in results}
    assert len(case_ids) == 1
    case = Case.objects.get()
    assert case_ids == {str(case.pk)}
    assert case.session_id == session.pk
    assert FeedbackEvent.objects.filter(session=session).count() == CONCURRENCY


def test_concurrent_not_useful_feedback_opens_exactly_one_bad_case(project, api_key):
    session = make_session(project)

    results = hammer(api_key, "not_useful")

    assert [status for status, _ in results] == [200] * CONCURRENCY
    assert {body["caseId"] for _, body in results} == {None}
    bad_case = BadCase.objects.get(session=session, status__in=["open", "triaged"])
    assert bad_case.feedback_count == CONCURRENCY
    assert BadCase.objects.filter(session=session).count() == 1


def test_concurrent_case_creation_without_feedback_lock_is_race_safe(project):
    """The service alone (as the admin calls it) relies on the unique index, not on the row lock."""
    from cases.services import case_create_from_session

    session = make_session(project)
    barrier = threading.Barrier(16)

    def create(_: int) -> str:
        try:
            barrier.wait(timeout=30)
            return str(case_create_from_session(session=session).pk)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = set(pool.map(create, range(16)))

    assert len(ids) == 1
    assert Case.objects.count() == 1


def test_concurrent_duplicates_with_one_idempotency_key_store_one_event(project, api_key):
    session = make_session(project)

    results = hammer(api_key, "not_useful", idempotency_key="retry-storm-1")

    assert [status for status, _ in results] == [200] * CONCURRENCY
    assert len({json.dumps(body) for _, body in results}) == 1
    assert FeedbackEvent.objects.filter(session=session).count() == 1
    assert BadCase.objects.get(session=session).feedback_count == 1
    assert json.loads(IdempotencyRecord.objects.get().response_body) == results[0][1]


def test_concurrent_requests_with_one_key_and_two_bodies_store_the_first_and_refuse_the_other(project, api_key):
    session = make_session(project)
    values = ["useful", "not_useful"] * (CONCURRENCY // 2)

    results = hammer(api_key, values, idempotency_key="retry-storm-2")

    event = FeedbackEvent.objects.get(session=session)  # exactly one
    for value, (status, body) in zip(values, results, strict=True):
        if value == event.value:
            assert (status, body["success"]) == (200, True)
        else:
            assert (status, body["success"]) == (422, False)
            assert "already used with another request" in body["message"]
