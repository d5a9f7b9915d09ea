from django.urls import reverse

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
