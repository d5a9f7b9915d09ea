"""Actors and data of the admin tests: a reviewer, an approver, an outsider, evaluated sessions."""

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client

from tests.factories import UserFactory, bad_case_of, case_of, evaluated_session

PASSWORD = "pw-for-tests-only"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Every test starts from an empty cache (API keys, throttling)."""
    cache.clear()
    yield
    cache.clear()


def _user_in(group_name: str, username: str):
    user = UserFactory(username=username, is_staff=True)
    user.groups.add(Group.objects.get(name=group_name))
    return user


@pytest.fixture
def reviewer(db):
    return _user_in("Reviewer", "bob")


@pytest.fixture
def approver(db):
    return _user_in("Case approver", "dana")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def reviewer_client(reviewer) -> Client:
    return logged_in(reviewer)


@pytest.fixture
def approver_client(approver) -> Client:
    return logged_in(approver)


@pytest.fixture
def session(project):
    return evaluated_session(project, "s-admin-0001")


@pytest.fixture
def rejected_session(project):
    """Rejected by the verifier and voted not useful: its bad case is open."""
    return evaluated_session(
        project, "s-admin-0002", verdict="REJECT", feedback="not_useful", comment="wrong root cause"
    )


@pytest.fixture
def pending_case(session):
    return case_of(session)


@pytest.fixture
def bad_case(rejected_session):
    return bad_case_of(rejected_session)
