"""Staff users read API data only with the admin permission that shows the same data."""

import pytest
from django.contrib.auth.models import Group, Permission
from rest_framework.test import APIClient

from tests.factories import UserFactory, evaluated_session

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def stored(project):
    return evaluated_session(project, "s-private")


def test_staff_without_session_permission_sees_no_session(stored):
    tuner = UserFactory(username="tuner")
    tuner.user_permissions.add(Permission.objects.get(codename="change_verificationthresholds"))
    client = _client(tuner)

    assert client.get("/api/sessions").json()["results"] == []
    assert client.get("/api/sessions/s-private").status_code == 404
    assert client.get("/api/trace/s-private").status_code == 404
    assert (
        client.post("/api/feedback", {"sessionId": "s-private", "feedback": "useful"}, format="json").status_code == 404
    )
    stored.refresh_from_db()
    assert stored.feedback == ""


def test_reviewer_role_still_reads_every_project(stored, other_project):
    evaluated_session(other_project, "s-elsewhere")
    reviewer = UserFactory(username="bob")
    reviewer.groups.add(Group.objects.get(name="Reviewer"))
    client = _client(reviewer)

    ids = {row["sessionId"] for row in client.get("/api/sessions").json()["results"]}
    assert ids == {"s-private", "s-elsewhere"}
    assert client.get("/api/trace/s-private").status_code == 200


def test_staff_without_case_permission_cannot_read_cases(stored):
    viewer = UserFactory(username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))
    client = _client(viewer)

    assert client.get("/api/sessions").status_code == 200
    assert client.get("/api/cases").status_code == 403


def test_reviewer_role_reads_cases(stored):
    reviewer = UserFactory(username="bob")
    reviewer.groups.add(Group.objects.get(name="Reviewer"))

    assert _client(reviewer).get("/api/cases").status_code == 200
