"""Taking work in one step ("Take next 10" on the triage queue) and, when configured, new queue
items given to reviewers in turn (round robin)."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from backoffice.models import TriageAssignment
from backoffice.services.sharing import (
    triage_assignment_round_robin,
    triage_assignments_take,
    triage_assignments_take_next,
)
from diagnosis.models import DiagnosisSession
from tests import clock
from tests.admin.conftest import _user_in, logged_in
from tests.factories import UserFactory, evaluated_session, feedback_of

pytestmark = pytest.mark.django_db

TRIAGE = reverse("admin:backoffice_triageitem_changelist")
TAKE_NEXT = reverse("admin:backoffice_triageitem_take_next")


@pytest.fixture
def alice(db):
    return _user_in("Reviewer", "alice")


@pytest.fixture
def queue(project):
    """Twelve REJECT sessions and two LOW_CONFID ones waiting, oldest first; one PASS that does not wait."""
    rejected = [
        evaluated_session(project, f"s-r{i:02}", verdict="REJECT", created_at=clock.ago(hours=30 - i))
        for i in range(12)
    ]
    low = [
        evaluated_session(project, f"s-l{i}", verdict="LOW_CONFID", created_at=clock.ago(hours=40 - i))
        for i in range(2)
    ]
    evaluated_session(project, "s-pass", created_at=clock.ago(hours=50))
    return {"reject": rejected, "low": low}


def _mine(user) -> list[str]:
    return list(
        TriageAssignment.objects.filter(assignee=user)
        .order_by("session__created_at")
        .values_list("session__session_id", flat=True)
    )


def test_take_next_takes_the_ten_oldest_nobody_has_of_the_filtered_list(reviewer_client, reviewer, alice, queue):
    triage_assignments_take(session_pks=[queue["reject"][0].pk], user=alice)

    response = reviewer_client.post(TAKE_NEXT, {"_changelist_filters": "reason=reject&p=2&assigned=nobody"})

    # The REJECT ones only (the list's filter), alice's left to her, and back on My queue with the filter.
    assert _mine(reviewer) == [f"s-r{i:02}" for i in range(1, 11)]
    assert response["Location"] == f"{TRIAGE}?reason=reject&assigned=me"
    assert any("10 sessions are now in your queue" in str(m) for m in response.wsgi_request._messages)
    listed = reviewer_client.get(response["Location"]).context["cl"].result_list
    assert [s.session_id for s in listed] == _mine(reviewer)


def test_take_next_again_takes_what_is_left_then_says_none_is(reviewer_client, reviewer, queue):
    reviewer_client.post(TAKE_NEXT, {"_changelist_filters": ""})
    reviewer_client.post(TAKE_NEXT, {"_changelist_filters": ""})
    response = reviewer_client.post(TAKE_NEXT, {"_changelist_filters": ""})

    assert len(_mine(reviewer)) == 14  # every waiting session, not the PASS one
    assert any("No session is left to take" in str(m) for m in response.wsgi_request._messages)


def test_two_reviewers_taking_at_once_never_share_a_session(reviewer, alice, queue):
    sessions = DiagnosisSession.objects.filter(needs_review=True)
    # Alice took two of the sessions the reviewer is about to pick, between the pick and the insert.
    triage_assignments_take(session_pks=[queue["low"][0].pk, queue["reject"][0].pk], user=alice)

    taken = triage_assignments_take_next(queue=sessions, user=reviewer, count=5)

    assert len(taken) == 5 and not set(taken) & {queue["low"][0].pk, queue["reject"][0].pk}
    assert TriageAssignment.objects.count() == 7


def test_take_next_needs_the_review_permission_and_post(queue):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))
    client = logged_in(viewer)
    assert 'id="se-take-next"' not in client.get(TRIAGE).content.decode()
    assert client.post(TAKE_NEXT, {}).status_code == 403
    with pytest.raises(PermissionDenied):
        triage_assignments_take_next(queue=DiagnosisSession.objects.all(), user=viewer, count=10)
    assert not TriageAssignment.objects.exists()


def test_the_queue_offers_take_next_with_its_key(reviewer_client, queue):
    html = reviewer_client.get(TRIAGE, {"reason": "reject"}).content.decode()

    assert 'id="se-take-next"' in html and "Take the next 10 <kbd>t</kbd>" in html
    assert 'name="_changelist_filters" value="reason=reject"' in html
    chinese = reviewer_client.get(TRIAGE, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "认领接下来的 10 个" in chinese
    assert reviewer_client.get(TAKE_NEXT).status_code == 405


def test_round_robin_is_off_unless_a_group_is_named(project, reviewer, alice):
    session = evaluated_session(project, "s-new", verdict="REJECT")

    assert triage_assignment_round_robin(session_pk=session.pk) is None
    assert not TriageAssignment.objects.exists()


def test_round_robin_gives_new_queue_items_to_reviewers_in_turn(project, reviewer, alice, settings):
    settings.SELFEVAL_TRIAGE_ROUND_ROBIN_GROUP = "Reviewer"
    approver_only = _user_in("Case approver", "dana")  # not in the group: never given one
    UserFactory(username="carol", is_staff=True, is_active=False).groups.add(*alice.groups.all())  # inactive

    rejected = [evaluated_session(project, f"s-rr{i}", verdict="REJECT") for i in range(4)]
    passed = evaluated_session(project, "s-rr-pass")
    feedback_of(passed, "not_useful", comment="wrong")  # enters the queue through feedback
    evaluated_session(project, "s-rr-fine")  # PASS, no feedback: not in the queue

    owners = {
        a.session.session_id: a.assignee.username
        for a in TriageAssignment.objects.select_related("session", "assignee")
    }
    assert owners == {"s-rr0": "alice", "s-rr1": "bob", "s-rr2": "alice", "s-rr3": "bob", "s-rr-pass": "alice"}
    assert approver_only.username not in owners.values()
    # Evaluated again, an assigned session keeps its reviewer.
    from diagnosis.services.evaluation import session_evaluate

    session_evaluate(session_pk=rejected[0].pk)
    assert TriageAssignment.objects.get(session=rejected[0]).assignee == alice
