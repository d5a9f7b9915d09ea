from django.urls import reverse

from cases.models import CaseStatus
from tests.factories import case_of, evaluated_session


def test_case_list_shows_the_session_verdict_and_groundedness(approver_client, project):
    session = evaluated_session(project, "s-reject", verdict="REJECT")
    case_of(session)

    response = approver_client.get(reverse("admin:cases_case_changelist"))

    assert response.status_code == 200
    page = response.content.decode()
    assert "column-verdict_display" in page
    assert "column-groundedness_display" in page
    assert session.get_verifier_verdict_display() in page
    shown = "—" if session.groundedness_score is None else f"{session.groundedness_score:.2f}"
    assert f'<td class="field-groundedness_display">{shown}</td>' in page


def approve_post(case, **extra) -> dict:
    fields = {name: getattr(case, name) for name in ("title", "fault_category", "service", "error_code")}
    fields.update(root_cause=case.root_cause, solution=case.solution, query=case.query, decision_note="")
    # The revision inline's management form, as the rendered page sends it.
    fields.update({"revisions-TOTAL_FORMS": "0", "revisions-INITIAL_FORMS": "0"})
    return {**fields, "_approve": "Save & approve", **extra}


def test_approving_a_case_from_a_reject_session_without_confirming_does_not_approve(approver_client, project):
    case = case_of(evaluated_session(project, "s-reject", verdict="REJECT"))
    url = reverse("admin:cases_case_change", args=[case.pk])

    page = approver_client.get(url).content.decode()
    assert "se-warning" in page

    response = approver_client.post(url, approve_post(case))

    assert response.status_code == 200  # the form again, with the error
    assert "confirm_weak_session" in response.content.decode()
    case.refresh_from_db()
    assert case.status == CaseStatus.PENDING


def test_approving_a_case_from_a_reject_session_with_confirmation_approves(approver_client, project):
    case = case_of(evaluated_session(project, "s-reject", verdict="REJECT"))
    url = reverse("admin:cases_case_change", args=[case.pk])

    response = approver_client.post(url, approve_post(case, confirm_weak_session="on"))

    assert response.status_code == 302
    case.refresh_from_db()
    assert case.status == CaseStatus.APPROVED
