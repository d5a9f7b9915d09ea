"""Who may enter the admin and who may approve: a non-staff user, a reviewer, an approver."""

import pytest
from django.urls import reverse

from cases.models import Case, CaseStatus
from tests.admin.conftest import logged_in
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db

PAGES = [
    ("admin:index", []),
    ("admin:calibration", []),
    ("admin:backoffice_triageitem_changelist", []),
    ("admin:diagnosis_diagnosissession_changelist", []),
    ("admin:cases_case_changelist", []),
    ("admin:cases_badcase_changelist", []),
]


@pytest.mark.parametrize(("name", "args"), PAGES)
def test_non_staff_user_cannot_enter(outsider, name, args):
    response = logged_in(outsider).get(reverse(name, args=args))

    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def test_non_staff_user_cannot_open_the_inspector_or_post_actions(outsider, session):
    client = logged_in(outsider)

    assert client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])).status_code == 302
    response = client.post(
        reverse("admin:diagnosis_diagnosissession_review", args=[session.pk]),
        {"judgement": "correct", "verifier_was_right": "yes"},
    )
    assert response.status_code == 302
    assert not session.reviews.exists()


def test_reviewer_does_not_see_the_approve_action(reviewer_client, pending_case):
    response = reviewer_client.get(reverse("admin:cases_case_changelist"))

    form = response.context["action_form"]  # None when the user has no action at all
    actions = dict(form.fields["action"].choices) if form else {}
    assert "approve_cases" not in actions and "reject_cases" not in actions
    change = reviewer_client.get(reverse("admin:cases_case_change", args=[pending_case.pk]))
    assert change.status_code == 200
    assert "approve_cases" not in change.content.decode()


def test_reviewer_cannot_approve_by_posting_the_action(reviewer_client, pending_case):
    for url, prefix in (
        (reverse("admin:cases_case_changelist"), ""),
        (reverse("admin:cases_case_change", args=[pending_case.pk]), "CHANGE_FORM-"),
    ):
        reviewer_client.post(
            url, {f"{prefix}action": "approve_cases", "_selected_action": [str(pending_case.pk)], "index": "0"}
        )

    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING
    assert list(pending_case.revisions.values_list("action", flat=True)) == ["create"]


def test_reviewer_cannot_edit_a_case(reviewer_client, pending_case):
    response = reviewer_client.post(
        reverse("admin:cases_case_change", args=[pending_case.pk]), {"title": "hijacked", "_save": "1"}
    )

    assert response.status_code == 403
    assert Case.objects.get(pk=pending_case.pk).title != "hijacked"


def test_approver_approves_from_the_list(approver_client, approver, pending_case):
    response = approver_client.post(
        reverse("admin:cases_case_changelist"),
        {"action": "approve_cases", "_selected_action": [str(pending_case.pk)], "index": "0"},
    )

    assert response.status_code == 302
    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.APPROVED
    assert pending_case.reviewed_by == approver
    assert list(pending_case.revisions.order_by("pk").values_list("action", flat=True)) == ["create", "approve"]


def test_the_case_form_has_no_approve_action_that_would_drop_its_edits(approver_client, pending_case):
    url = reverse("admin:cases_case_change", args=[pending_case.pk])
    assert 'name="CHANGE_FORM-action"' not in approver_client.get(url).content.decode()

    approver_client.post(
        url, {"CHANGE_FORM-action": "reject_cases", "_selected_action": [str(pending_case.pk)], "index": "0"}
    )

    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING


def test_approver_edit_is_recorded_as_a_revision(approver_client, approver, pending_case):
    url = reverse("admin:cases_case_change", args=[pending_case.pk])
    extracted_solution = pending_case.solution
    data = {
        "title": pending_case.title,
        "fault_category": "TIMEOUT",
        "service": "order-service",
        "error_code": "HTTP 503",
        "root_cause": pending_case.root_cause,
        "solution": "扩大连接池到 50",
        "query": pending_case.query,
        "revisions-TOTAL_FORMS": "0",
        "revisions-INITIAL_FORMS": "0",
        "revisions-MIN_NUM_FORMS": "0",
        "revisions-MAX_NUM_FORMS": "0",
        "_save": "1",
    }

    response = approver_client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    revision = pending_case.revisions.exclude(action="create").get()
    assert revision.editor == approver and revision.action == "edit"
    assert revision.changes["solution"] == [extracted_solution, "扩大连接池到 50"]
    assert revision.changes["fault_category"] == ["DATABASE", "TIMEOUT"]  # extracted from the answer, then edited
    page = approver_client.get(url).content.decode()
    assert "扩大连接池到 50" in page and f"<del>{extracted_solution}</del>" in page


def test_reviewer_sees_review_actions_but_not_case_approval(reviewer_client, session):
    html = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])).content.decode()

    assert "Save review" in html
    assert "Re-run evaluation" in html
    assert "Open bad case" in html


def test_reviewers_may_not_see_api_keys_superusers_may(reviewer_client, superuser, project):
    make_api_key(project)
    url = reverse("admin:tenancy_projectapikey_changelist")

    assert reviewer_client.get(url).status_code == 403
    assert logged_in(superuser).get(url).status_code == 200
