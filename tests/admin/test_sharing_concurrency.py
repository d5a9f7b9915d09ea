"""Reviewers racing for one session (PostgreSQL, real threads): one assignee, one lock holder."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from backoffice.models import ReviewLock, TriageAssignment
from backoffice.services.sharing import review_lock_refresh, triage_assignments_take
from tests.admin.conftest import _user_in
from tests.factories import evaluated_session

pytestmark = [
    pytest.mark.postgres,
    # The roles are created by a migration; a transactional test's flush must bring them back.
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

REVIEWERS = 8


def race(action) -> list:
    barrier = threading.Barrier(REVIEWERS)

    def run(index: int):
        try:
            barrier.wait(timeout=30)
            return action(index)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=REVIEWERS) as pool:
        return list(pool.map(run, range(REVIEWERS)))


def test_concurrent_takes_and_opens_leave_one_assignee_and_one_lock_holder(project):
    session = evaluated_session(project, "s-race", verdict="REJECT")
    users = [_user_in("Reviewer", f"reviewer-{i}") for i in range(REVIEWERS)]

    taken = race(lambda i: triage_assignments_take(session_pks=[session.pk], user=users[i]).taken)
    holders = race(lambda i: review_lock_refresh(session=session, user=users[i]).holder_id)

    assert sorted(taken) == [0] * (REVIEWERS - 1) + [1]
    assert TriageAssignment.objects.count() == 1
    lock = ReviewLock.objects.get()
    assert set(holders) == {lock.holder_id}
