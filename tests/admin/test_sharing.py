"""Sharing the work: reviewers take sessions of the queue, and see who has one open (a soft lock)."""

import datetime as dt

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import reverse

from backoffice.actions import MAX_NAMED_HOLDS
from backoffice.models import ReviewLock, TriageAssignment
from backoffice.services.sharing import (
    REVIEW_LOCK_SECONDS,
    review_lock_refresh,
    triage_assignments_release,
    triage_assignments_take,
)
from diagnosis.models import SessionReview
from tests import clock
from tests.admin.conftest import _user_in, logged_in
from tests.admin.test_actions import bulk_review_data
from tests.admin.test_queries import EXPECTED
from tests.factories import UserFactory, evaluated_session

pytestmark = pytest.mark.django_db

TRIAGE = reverse("admin:backoffice_triageitem_changelist")


def url(name, session):
    return reverse(f"admin:diagnosis_diagnosissession_{name}", args=[session.pk])


@pytest.fixture
def alice(db):
    return _user_in("Reviewer", "alice")


@pytest.fixture
def rejected(project):
    return [evaluated_session(project, f"s-{i}", verdict="REJECT", created_at=clock.ago(hours=9 - i)) for i in range(3)]


def test_a_reviewer_takes_a_session_from_the_inspector_and_finds_it_in_my_queue(reviewer_client, reviewer, rejected):
    response = reviewer_client.post(
        url("take", rejected[1]), {"_list": "triage", "_changelist_filters": "reason=reject"}
    )

    assert response.status_code == 302 and "_list=triage" in response["Location"]
    assert TriageAssignment.objects.get().assignee == reviewer
    mine = reviewer_client.get(TRIAGE, {"assigned": "me"}).context["cl"].result_list
    assert [s.session_id for s in mine] == ["s-1"]
    unassigned = reviewer_client.get(TRIAGE, {"assigned": "nobody"}).context["cl"].result_list
    assert [s.session_id for s in unassigned] == ["s-0", "s-2"]
    assert "bob" in reviewer_client.get(TRIAGE).content.decode()  # the who column


def test_a_taken_session_stays_with_its_assignee(reviewer_client, reviewer, alice, rejected):
    triage_assignments_take(session_pks=[rejected[0].pk], user=alice)

    reviewer_client.post(url("take", rejected[0]))
    reviewer_client.post(url("release", rejected[0]))

    assert TriageAssignment.objects.get().assignee == alice
    others = reviewer_client.get(TRIAGE, {"assigned": "others"}).context["cl"].result_list
    assert [s.session_id for s in others] == ["s-0"]


def test_the_reassign_permission_takes_and_releases_anybodys(reviewer, alice, rejected):
    triage_assignments_take(session_pks=[rejected[0].pk], user=alice)
    reviewer.user_permissions.add(Permission.objects.get(codename="reassign_triageassignment"))
    reviewer = type(reviewer).objects.get(pk=reviewer.pk)  # a fresh permission cache

    result = triage_assignments_take(session_pks=[rejected[0].pk, rejected[1].pk], user=reviewer)

    assert (result.taken, result.held_by_others) == (2, 0)
    assert triage_assignments_release(session_pks=[rejected[0].pk], user=alice) == 0
    triage_assignments_take(session_pks=[rejected[2].pk], user=alice)
    assert triage_assignments_release(session_pks=[rejected[2].pk], user=reviewer) == 1


def test_queue_actions_take_and_release_the_selection(reviewer_client, reviewer, alice, rejected):
    triage_assignments_take(session_pks=[rejected[2].pk], user=alice)
    selected = [str(s.pk) for s in rejected]

    reviewer_client.post(TRIAGE, {"action": "take", "_selected_action": selected, "index": "0"})
    assert dict(TriageAssignment.objects.values_list("session__session_id", "assignee__username")) == {
        "s-0": "bob",
        "s-1": "bob",
        "s-2": "alice",
    }
    reviewer_client.post(TRIAGE, {"action": "release", "_selected_action": selected, "index": "0"})
    assert dict(TriageAssignment.objects.values_list("session__session_id", "assignee__username")) == {"s-2": "alice"}


def test_taking_needs_the_review_permission_and_a_post_with_csrf(reviewer, rejected):
    viewer = UserFactory(username="erin", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))
    with pytest.raises(PermissionDenied):
        triage_assignments_take(session_pks=[rejected[0].pk], user=viewer)
    assert logged_in(viewer).post(url("take", rejected[0])).status_code == 403
    assert logged_in(reviewer).get(url("take", rejected[0])).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reviewer)
    assert strict.post(url("take", rejected[0])).status_code == 403
    assert strict.post(url("presence", rejected[0])).status_code == 403
    assert not TriageAssignment.objects.exists() and not ReviewLock.objects.exists()


def test_the_inspector_shows_who_else_is_reviewing_and_the_lock_expires_on_its_own(
    reviewer_client, reviewer, alice, rejected
):
    alice_client = logged_in(alice)
    assert alice_client.post(url("presence", rejected[0])).json() == {"label": ""}  # alice opens it

    with time_machine.travel(clock.now() + dt.timedelta(minutes=2, seconds=5), tick=False):
        alice_client.post(url("presence", rejected[0]))  # her page's heartbeat
        page = reviewer_client.get(url("change", rejected[0])).content.decode()
        assert "alice is reviewing this (opened 2\xa0minutes ago)" in page
        assert reviewer_client.post(url("presence", rejected[0])).json()["label"].startswith("alice is reviewing")
        queue = reviewer_client.get(TRIAGE).content.decode()
        assert "alice reviewing" in queue
    assert ReviewLock.objects.get().holder == alice  # bob's heartbeat left her lock alone

    # Her page closed without a goodbye: no heartbeat for longer than the lock lives.
    later = clock.now() + dt.timedelta(minutes=2, seconds=6 + REVIEW_LOCK_SECONDS)
    with time_machine.travel(later, tick=False):
        assert "is reviewing this" not in reviewer_client.get(url("change", rejected[0])).content.decode()
        assert reviewer_client.post(url("presence", rejected[0])).json() == {"label": ""}
        assert ReviewLock.objects.get().holder == reviewer  # the expired lock passed to bob
        assert "alice reviewing" not in reviewer_client.get(TRIAGE).content.decode()


def test_saving_a_review_or_leaving_releases_the_lock(reviewer_client, reviewer, alice, rejected):
    review_lock_refresh(session=rejected[0], user=reviewer)
    reviewer_client.post(url("review", rejected[0]), {"judgement": "wrong", "verifier_was_right": "yes"})
    assert not ReviewLock.objects.exists()

    review_lock_refresh(session=rejected[1], user=reviewer)
    logged_in(alice).post(url("presence", rejected[1]), {"release": "1"})  # not hers: stays
    assert ReviewLock.objects.count() == 1
    reviewer_client.post(url("presence", rejected[1]), {"release": "1"})
    assert not ReviewLock.objects.exists()


def test_staff_who_only_view_never_hold_a_lock(rejected, alice):
    viewer = UserFactory(username="erin", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))
    review_lock_refresh(session=rejected[0], user=alice)

    answer = logged_in(viewer).post(url("presence", rejected[0])).json()

    assert answer["label"].startswith("alice is reviewing")
    assert ReviewLock.objects.get().holder == alice


def test_queue_and_inspector_query_counts_do_not_grow_with_assignments_and_locks(
    reviewer_client, reviewer, alice, project, django_assert_max_num_queries
):
    sessions = [evaluated_session(project, f"q-{i}", verdict="REJECT") for i in range(6)]
    for session in sessions[:3]:
        triage_assignments_take(session_pks=[session.pk], user=alice)
        review_lock_refresh(session=session, user=alice)
    with django_assert_max_num_queries(7):
        reviewer_client.get(TRIAGE)
    with django_assert_max_num_queries(7):
        reviewer_client.get(TRIAGE, {"assigned": "others"})
    with django_assert_max_num_queries(EXPECTED["inspector"]):
        reviewer_client.get(url("change", sessions[0]))
    with django_assert_max_num_queries(EXPECTED["inspector_in_queue"]):
        reviewer_client.get(url("change", sessions[0]) + "?_list=triage&_changelist_filters=assigned%3Dothers")


def test_approvers_take_like_reviewers_and_superusers_reassign(approver_client, approver, alice, rejected):
    superuser = UserFactory(username="root", is_superuser=True, is_staff=True)
    approver_client.post(url("take", rejected[0]))
    assert TriageAssignment.objects.get().assignee == approver

    triage_assignments_take(session_pks=[rejected[1].pk], user=alice)
    logged_in(superuser).post(url("take", rejected[1]))
    assert TriageAssignment.objects.get(session=rejected[1]).assignee == superuser
    page = logged_in(superuser).get(url("change", rejected[0])).content.decode()
    assert 'id="se-take"' in page and 'id="se-release"' in page  # anybody's, for a superuser
    assert 'id="se-take"' not in logged_in(alice).get(url("change", rejected[0])).content.decode()


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_a_review_recorded_over_another_reviewers_hold_says_so_on_the_page(reviewer_client, alice, rejected):
    review_lock_refresh(session=rejected[0], user=alice)  # alice has it open in the inspector

    response = reviewer_client.post(
        url("review", rejected[0]), {"judgement": "wrong", "verifier_was_right": "yes"}, follow=True
    )

    rejected[0].refresh_from_db()
    assert rejected[0].review_judgement == "wrong"  # soft: the review is recorded all the same
    assert (
        "alice had this session open in the inspector: your review was recorded over their hold. "
        "Tell them, so that the session is not reviewed twice."
    ) in _messages(response)
    assert ReviewLock.objects.get().holder == alice  # her hold stays: her page still has it open


def test_the_warning_speaks_chinese(reviewer_client, alice, rejected):
    review_lock_refresh(session=rejected[0], user=alice)
    reviewer_client.cookies["django_language"] = "zh-hans"

    response = reviewer_client.post(
        url("review", rejected[0]), {"judgement": "wrong", "verifier_was_right": "yes"}, follow=True
    )

    assert "alice 在审查器中打开了这个会话：你的审查记录在了对方的占用之上。请告诉对方，以免重复审查。" in _messages(
        response
    )


@pytest.mark.parametrize("hold", ["none", "own", "expired"])
def test_a_review_without_another_live_hold_says_nothing_of_holds(reviewer_client, reviewer, alice, rejected, hold):
    if hold == "own":
        review_lock_refresh(session=rejected[0], user=reviewer)
    if hold == "expired":
        with time_machine.travel(clock.ago(seconds=REVIEW_LOCK_SECONDS + 60)):
            review_lock_refresh(session=rejected[0], user=alice)

    response = reviewer_client.post(
        url("review", rejected[0]), {"judgement": "wrong", "verifier_was_right": "yes"}, follow=True
    )

    assert _messages(response) == ["Review recorded; the session left the triage queue."]


def _warnings(response) -> list[str]:
    return [str(m) for m in response.context["messages"] if m.level_tag == "warning"]


def test_a_bulk_review_over_other_reviewers_holds_names_those_sessions_on_the_page(
    reviewer_client, reviewer, alice, rejected
):
    review_lock_refresh(session=rejected[0], user=alice)
    review_lock_refresh(session=rejected[1], user=reviewer)  # his own hold is no news to him
    review_lock_refresh(session=rejected[2], user=_user_in("Reviewer", "carol"))
    data = bulk_review_data(rejected, dict.fromkeys(range(3), ("wrong", "yes", "")))

    response = reviewer_client.post(TRIAGE, data, follow=True)

    assert SessionReview.objects.count() == 3  # soft: every review is recorded all the same
    links = ", ".join(
        f'<a href="{url("change", session)}">{session.session_id}</a> ({name})'
        for session, name in [(rejected[0], "alice"), (rejected[2], "carol")]
    )
    assert _warnings(response) == [
        "2 sessions were open in other reviewers' inspectors: your reviews were recorded over their holds "
        f"({links}). Tell them, so that they are not reviewed twice."
    ]
    assert links in response.content.decode()  # links, not escaped markup
    assert ReviewLock.objects.get(session=rejected[0]).holder == alice  # their holds stay


def test_a_bulk_review_names_at_most_ten_held_sessions_and_speaks_chinese(reviewer_client, alice, project):
    sessions = [evaluated_session(project, f"h-{i:02}", verdict="REJECT") for i in range(MAX_NAMED_HOLDS + 1)]
    for session in sessions:
        review_lock_refresh(session=session, user=alice)
    reviewer_client.cookies["django_language"] = "zh-hans"

    response = reviewer_client.post(
        TRIAGE, bulk_review_data(sessions, dict.fromkeys(range(len(sessions)), ("wrong", "yes", ""))), follow=True
    )

    [warning] = _warnings(response)
    assert warning.startswith("11 个会话")
    assert "h-09</a> (alice), …" in warning and "h-10" not in warning


@pytest.mark.parametrize("hold", ["none", "own", "expired"])
def test_a_bulk_review_without_another_live_hold_says_nothing_of_holds(
    reviewer_client, reviewer, alice, rejected, hold
):
    if hold == "own":
        review_lock_refresh(session=rejected[0], user=reviewer)
    if hold == "expired":
        with time_machine.travel(clock.ago(seconds=REVIEW_LOCK_SECONDS + 60)):
            review_lock_refresh(session=rejected[0], user=alice)

    response = reviewer_client.post(TRIAGE, bulk_review_data(rejected, {0: ("wrong", "yes", "")}), follow=True)

    assert SessionReview.objects.count() == 1
    assert _warnings(response) == []
