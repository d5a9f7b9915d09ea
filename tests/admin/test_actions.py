"""The inspector's and the triage queue's actions go through the services, POST only, CSRF-protected."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from backoffice.triage import TRIAGE_CHANGELIST
from cases.models import BadCase, Case
from diagnosis.models import DiagnosisSession, SessionReview
from diagnosis.services.reviews import session_mark_reviewed
from tests.admin.conftest import logged_in
from tests.factories import UserFactory, evaluated_session

pytestmark = pytest.mark.django_db


def url(name, session):
    return reverse(f"admin:diagnosis_diagnosissession_{name}", args=[session.pk])


def test_mark_reviewed_records_the_review_and_leaves_the_queue(reviewer_client, reviewer, rejected_session):
    assert rejected_session.needs_review

    response = reviewer_client.post(
        url("review", rejected_session), {"judgement": "wrong", "verifier_was_right": "yes", "notes": "right to reject"}
    )

    assert response.status_code == 302
    review = SessionReview.objects.get(session=rejected_session)
    assert (review.reviewer, review.judgement, review.verifier_was_right) == (reviewer, "wrong", True)
    assert review.verifier_verdict == "REJECT" and review.notes == "right to reject"
    session = DiagnosisSession.objects.get(pk=rejected_session.pk)
    assert session.review_judgement == "wrong" and session.reviewed_at is not None
    assert not session.needs_review


def test_mark_reviewed_with_a_bad_form_writes_nothing(reviewer_client, rejected_session):
    response = reviewer_client.post(
        url("review", rejected_session), {"judgement": "great", "verifier_was_right": "yes"}
    )

    assert response.status_code == 400
    assert not SessionReview.objects.exists()
    assert DiagnosisSession.objects.get(pk=rejected_session.pk).needs_review


def test_actions_refuse_get(reviewer_client, session):
    for name in ("review", "rerun", "open_bad_case", "create_case"):
        assert reviewer_client.get(url(name, session)).status_code == 405


def test_actions_need_csrf(reviewer, session):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)

    response = client.post(url("open_bad_case", session))

    assert response.status_code == 403
    assert not BadCase.objects.exists()


def test_actions_on_unknown_session_are_404(reviewer_client):
    response = reviewer_client.post(reverse("admin:diagnosis_diagnosissession_open_bad_case", args=[999999]))

    assert response.status_code == 404


@pytest.mark.parametrize("action", ["rerun", "review", "open-bad-case", "create-case"])
@pytest.mark.parametrize("object_id", ["abc", "1.5", "99999999999999999999999", "%00"])
def test_actions_on_a_malformed_session_id_are_404(superuser, session, action, object_id):
    response = logged_in(superuser).post(f"/admin/diagnosis/diagnosissession/{object_id}/{action}/")

    assert response.status_code in (400, 404), response.status_code


@pytest.mark.parametrize(
    "query",
    ["p=99999999999999999999", "p=-1", "p=x", "project__id__exact=99999999999999999999", "mode__exact=nonsense"],
)
def test_triage_queue_answers_malformed_parameters_without_a_server_error(reviewer_client, rejected_session, query):
    response = reviewer_client.get(reverse(TRIAGE_CHANGELIST) + "?" + query)

    assert response.status_code < 500
    if response.status_code == 302:  # the admin's own answer to a lookup it cannot apply
        assert response["Location"].endswith("?e=1")


def test_open_bad_case_from_the_inspector_is_idempotent(reviewer_client, session):
    reviewer_client.post(url("open_bad_case", session))
    reviewer_client.post(url("open_bad_case", session))

    bad_case = BadCase.objects.get(session=session)
    assert bad_case.source == "reviewer"


def test_create_case_from_the_inspector(reviewer_client, reviewer, session):
    response = reviewer_client.post(url("create_case", session))

    assert response.status_code == 302
    case = Case.objects.get(session=session)
    assert case.status == "pending"
    assert case.created_by == reviewer.username


def test_rerun_requests_evaluation(reviewer_client, session, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        response = reviewer_client.post(url("rerun", session))

    assert response.status_code == 302
    session.refresh_from_db()
    assert session.evaluation_requested_at is not None


def test_staff_without_review_permission_cannot_review(session):
    staff = UserFactory(username="erin", is_staff=True)
    client = Client()
    client.force_login(staff)

    response = client.post(url("review", session), {"judgement": "correct", "verifier_was_right": "yes"})

    assert response.status_code == 403
    assert not SessionReview.objects.exists()


def test_service_refuses_a_user_without_permission(session):
    staff = UserFactory(username="erin", is_staff=True)

    with pytest.raises(Exception, match="may not"):
        session_mark_reviewed(session=session, reviewer=staff, judgement="correct", verifier_was_right=True)


def bulk_review_data(sessions, reviews: dict[int, tuple[str, str, str]]) -> dict:
    """The bulk review page's POST: `reviews` maps a row to (judgement, verifier right, notes)."""
    data = {
        "action": "mark_reviewed",
        "apply": "1",
        "_selected_action": [str(s.pk) for s in sessions],
        "review-TOTAL_FORMS": str(len(sessions)),
        "review-INITIAL_FORMS": str(len(sessions)),
    }
    for i, session in enumerate(sessions):
        judgement, verifier, notes = reviews.get(i, ("", "", ""))
        data |= {f"review-{i}-session": str(session.pk), f"review-{i}-judgement": judgement}
        data |= {f"review-{i}-verifier_was_right": verifier, f"review-{i}-notes": notes}
    return data


def test_triage_bulk_review_lists_each_selected_session_with_its_own_judgement(reviewer_client, project):
    sessions = [evaluated_session(project, f"s-{i}", verdict="REJECT", query=f"question {i}?") for i in range(3)]

    page = reviewer_client.post(
        reverse("admin:backoffice_triageitem_changelist"),
        {"action": "mark_reviewed", "_selected_action": [str(s.pk) for s in sessions[:2]], "index": "0"},
    )

    assert page.status_code == 200
    assert [session.session_id for _form, session in page.context["rows"]] == ["s-0", "s-1"]
    html = page.content.decode()
    assert "question 0?" in html and "question 1?" in html and "question 2?" not in html
    assert 'name="review-1-judgement"' in html and 'name="csrfmiddlewaretoken"' in html
    assert not SessionReview.objects.exists()


def test_triage_bulk_review_records_a_judgement_per_session_and_skips_the_rest(reviewer_client, project):
    sessions = [evaluated_session(project, f"s-{i}", verdict="REJECT") for i in range(3)]
    data = bulk_review_data(sessions, {0: ("wrong", "yes", "cause is elsewhere"), 2: ("correct", "no", "")})

    response = reviewer_client.post(reverse("admin:backoffice_triageitem_changelist") + "?reason=reject", data)

    assert response.status_code == 302 and response["Location"].endswith("?reason=reject")
    reviews = {r.session.session_id: (r.judgement, r.verifier_was_right, r.notes) for r in SessionReview.objects.all()}
    assert reviews == {"s-0": ("wrong", True, "cause is elsewhere"), "s-2": ("correct", False, "")}
    assert list(DiagnosisSession.objects.filter(needs_review=True).values_list("session_id", flat=True)) == ["s-1"]


def test_triage_bulk_review_with_an_error_writes_nothing(reviewer_client, project):
    sessions = [evaluated_session(project, f"s-{i}", verdict="REJECT") for i in range(2)]
    data = bulk_review_data(sessions, {0: ("wrong", "yes", ""), 1: ("great", "yes", "")})

    response = reviewer_client.post(reverse("admin:backoffice_triageitem_changelist"), data)

    assert response.status_code == 400
    assert not SessionReview.objects.exists()
    missing_verifier = bulk_review_data(sessions, {0: ("wrong", "", "")})
    assert reviewer_client.post(reverse("admin:backoffice_triageitem_changelist"), missing_verifier).status_code == 400
    assert not SessionReview.objects.exists()


def test_triage_bulk_review_ignores_a_session_that_was_not_selected(reviewer_client, project):
    sessions = [evaluated_session(project, f"s-{i}", verdict="REJECT") for i in range(2)]
    data = bulk_review_data(sessions[:1], {0: ("wrong", "yes", "")})
    data["review-0-session"] = str(sessions[1].pk)

    reviewer_client.post(reverse("admin:backoffice_triageitem_changelist"), data)

    assert not SessionReview.objects.exists()


def test_staff_without_review_permission_has_no_bulk_review(project):
    session = evaluated_session(project, "s-0", verdict="REJECT")
    staff = UserFactory(username="erin", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename="view_diagnosissession"))
    client = logged_in(staff)

    client.post(
        reverse("admin:backoffice_triageitem_changelist"), bulk_review_data([session], {0: ("wrong", "yes", "")})
    )

    assert not SessionReview.objects.exists()


def test_triage_bulk_open_bad_cases_and_rerun(reviewer_client, project, django_capture_on_commit_callbacks):
    sessions = [evaluated_session(project, f"s-{i}", verdict="LOW_CONFID") for i in range(2)]
    selected = [str(s.pk) for s in sessions]

    reviewer_client.post(
        reverse("admin:backoffice_triageitem_changelist"),
        {"action": "open_bad_cases", "_selected_action": selected, "index": "0"},
    )
    with django_capture_on_commit_callbacks(execute=False):
        reviewer_client.post(
            reverse("admin:backoffice_triageitem_changelist"),
            {"action": "rerun_evaluation", "_selected_action": selected, "index": "0"},
        )

    assert BadCase.objects.filter(source="reviewer").count() == 2
    assert DiagnosisSession.objects.filter(evaluation_requested_at__isnull=False).count() == 2


def test_bad_case_bulk_assign_and_status(reviewer_client, reviewer, bad_case):
    changelist = reverse("admin:cases_badcase_changelist")

    reviewer_client.post(changelist, {"action": "assign_to_me", "_selected_action": [str(bad_case.pk)], "index": "0"})
    reviewer_client.post(changelist, {"action": "mark_triaged", "_selected_action": [str(bad_case.pk)], "index": "0"})

    bad_case.refresh_from_db()
    assert bad_case.assignee == reviewer and bad_case.status == "triaged"
    reviewer_client.post(changelist, {"action": "mark_fixed", "_selected_action": [str(bad_case.pk)], "index": "0"})
    bad_case.refresh_from_db()
    assert bad_case.status == "fixed" and bad_case.closed_at is not None


def test_bad_case_assign_to_a_user_asks_then_assigns(reviewer_client, approver, bad_case):
    changelist = reverse("admin:cases_badcase_changelist")
    data = {"action": "assign_to_user", "_selected_action": [str(bad_case.pk)], "index": "0"}

    form_page = reviewer_client.post(changelist, data)
    assert form_page.status_code == 200 and "Assign" in form_page.content.decode()
    reviewer_client.post(changelist, {**data, "apply": "1", "assignee": str(approver.pk)})

    bad_case.refresh_from_db()
    assert bad_case.assignee == approver


def test_bad_case_change_view_saves_through_the_service(reviewer_client, reviewer, bad_case):
    response = reviewer_client.post(
        reverse("admin:cases_badcase_change", args=[bad_case.pk]),
        {"status": "wont_fix", "category": "hallucination", "assignee": str(reviewer.pk), "notes": "dup", "_save": "1"},
    )

    assert response.status_code == 302
    bad_case.refresh_from_db()
    assert (bad_case.status, bad_case.category, bad_case.notes) == ("wont_fix", "hallucination", "dup")
    assert bad_case.closed_at is not None
