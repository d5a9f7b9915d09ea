"""Under concurrent feedback for one session: one case, one open bad case (PostgreSQL, real threads)."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from cases.models import BadCase, Case
from feedback.models import FeedbackEvent
from tests.feedback.helpers import make_session

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CONCURRENCY = 50


def hammer(api_key: str, value: str) -> list[tuple[int, dict]]:
    """CONCURRENCY requests released at once, each thread on its own database connection."""
    barrier = threading.Barrier(CONCURRENCY)

    def submit(_: int) -> tuple[int, dict]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
        try:
            barrier.wait(timeout=30)
            response = client.post(
                "/api/feedback",
                data=json.dumps({"sessionId": "s-20261129-0001", "feedback": value}),
                content_type="application/json",
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
