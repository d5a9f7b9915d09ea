"""Deciding on the case form: "Save & approve" / "Save & reject" store the edits and the decision
together, and move on to the next pending case of the list the approver came from."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from cases.models import Case, CaseRevision, CaseStatus
from cases.services import case_approve, case_reject
from tests.admin.conftest import logged_in
from tests.admin.test_case_edits import browser_post_data
from tests.admin.test_i18n_walk import visible_text
from tests.factories import UserFactory, case_of, evaluated_session

pytestmark = pytest.mark.django_db

FILTERS = "status__exact=pending"


def change_url(case: Case, filters: str = "") -> str:
    url = reverse("admin:cases_case_change", args=[case.pk])
    return f"{url}?_changelist_filters={filters.replace('=', '%3D').replace('&', '%26')}" if filters else url


@pytest.fixture
def three_pending(project):
    """Three pending cases, newest first as the list shows them."""
    return [case_of(evaluated_session(project, f"s-decide-{i}")) for i in range(3)][::-1]


def test_save_and_approve_stores_the_edits_and_the_decision_then_opens_the_next_pending(
    approver_client, approver, three_pending
):
    first, second, _third = three_pending
    url = change_url(first, FILTERS)
    data = browser_post_data(approver_client.get(url))
    del data["_save"]

    response = approver_client.post(
        url, {**data, "solution": "扩大连接池到 50", "decision_note": "Checked against the runbook.", "_approve": "1"}
    )

    assert response.status_code == 302
    assert response["Location"] == change_url(second, FILTERS)
    first.refresh_from_db()
    assert (first.status, first.reviewed_by, first.solution) == ("approved", approver, "扩大连接池到 50")
    assert first.review_note == "Checked against the runbook."
    assert list(first.revisions.order_by("pk").values_list("action", flat=True)) == ["create", "edit", "approve"]


def test_save_and_reject_after_the_last_pending_returns_to_the_filtered_list(approver_client, pending_case):
    url = change_url(pending_case, FILTERS)
    data = browser_post_data(approver_client.get(url))
    del data["_save"]

    response = approver_client.post(url, {**data, "_reject": "1"})

    assert response.status_code == 302
    assert response["Location"] == reverse("admin:cases_case_changelist") + "?" + FILTERS
    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.REJECTED
    messages = [str(m) for m in response.wsgi_request._messages]
    assert any("saved and rejected" in m for m in messages) and any("No more pending cases" in m for m in messages)


def test_the_next_case_follows_the_lists_order_and_wraps(approver_client, three_pending):
    first, second, third = three_pending
    data = browser_post_data(approver_client.get(change_url(third)))
    del data["_save"]

    response = approver_client.post(change_url(third), {**data, "_approve": "1"})

    assert response["Location"] == change_url(first)  # past the oldest, back to the newest


def test_an_invalid_form_decides_nothing_and_saves_nothing(approver_client, pending_case):
    url = change_url(pending_case)
    data = browser_post_data(approver_client.get(url))
    del data["_save"]

    response = approver_client.post(url, {**data, "title": "", "solution": "changed", "_approve": "1"})

    assert response.status_code == 200
    assert "title" in response.context["adminform"].form.errors
    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING and pending_case.solution != "changed"
    assert list(pending_case.revisions.values_list("action", flat=True)) == ["create"]


def test_reviewers_do_not_see_or_use_the_decide_buttons(reviewer_client, pending_case):
    url = change_url(pending_case)
    html = reviewer_client.get(url).content.decode()
    assert 'name="_approve"' not in html and 'name="_reject"' not in html

    response = reviewer_client.post(url, {"title": pending_case.title, "_approve": "1"})

    assert response.status_code == 403
    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING


def test_an_editor_without_the_approve_permission_may_save_but_not_decide(pending_case):
    editor = UserFactory(username="eve", is_staff=True)
    editor.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="cases", codename__in=["view_case", "change_case"])
    )
    client = logged_in(editor)
    url = change_url(pending_case)
    page = client.get(url)
    html = page.content.decode()
    assert 'name="_save"' in html and 'name="_approve"' not in html
    data = browser_post_data(page)
    del data["_save"]

    response = client.post(url, {**data, "solution": "edited", "_approve": "1"})

    assert response.status_code == 403
    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING and pending_case.solution != "edited"


def test_approvers_see_the_decide_buttons_next_to_save(approver_client, pending_case, django_assert_max_num_queries):
    with django_assert_max_num_queries(16):
        html = approver_client.get(change_url(pending_case)).content.decode()

    row = html[html.index('class="submit-row"') :]
    assert row.index('name="_approve"') < row.index('name="_save"')
    assert 'name="_reject"' in row and 'name="decision_note"' in row
    assert "selfeval/unsaved.js" in html


def test_a_note_saved_without_a_decision_is_reported_not_stored(approver_client, pending_case):
    url = change_url(pending_case)
    data = browser_post_data(approver_client.get(url))

    response = approver_client.post(url, {**data, "decision_note": "later"})

    assert response.status_code == 302
    pending_case.refresh_from_db()
    assert pending_case.review_note == "" and pending_case.status == CaseStatus.PENDING
    assert any("review note was not stored" in str(m) for m in response.wsgi_request._messages)


def test_the_list_actions_say_they_decide_on_the_stored_fields(approver_client, pending_case):
    response = approver_client.post(
        reverse("admin:cases_case_changelist"),
        {"action": "approve_cases", "_selected_action": [str(pending_case.pk)], "index": "0"},
        follow=True,
    )

    assert "1 case approved with its stored fields." in response.content.decode()


def test_approving_with_changes_is_one_transaction(pending_case, approver):
    with pytest.raises(ValidationError):
        case_approve(case=pending_case, user=approver, changes={"title": "x" * 101})
    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING and len(pending_case.title) <= 100

    decided = case_reject(case=pending_case, user=approver, note="too generic", changes={"title": "Pool exhausted"})
    assert (decided.status, decided.title, decided.review_note) == ("rejected", "Pool exhausted", "too generic")


def test_approving_with_changes_needs_the_change_permission_too(pending_case):
    approver_only = UserFactory(username="ada", is_staff=True)
    approver_only.user_permissions.add(Permission.objects.get(codename="approve_case"))

    with pytest.raises(PermissionDenied):
        case_approve(case=pending_case, user=approver_only, changes={"title": "edited"})

    pending_case.refresh_from_db()
    assert pending_case.status == CaseStatus.PENDING and pending_case.title != "edited"


def test_the_case_form_speaks_chinese_and_names_its_list_once(approver_client, pending_case):
    html = approver_client.get(change_url(pending_case), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "保存并批准" in html and "保存并驳回" in html and "审核备注" in html
    # The breadcrumb used to read "Case library › Case library" (案例库 › 案例库).
    assert '<a href="/admin/cases/">案例</a>' in html and '<a href="/admin/cases/case/">案例库</a>' in html


def test_the_history_of_changes_reads_in_chinese(approver_client, approver, pending_case):
    case_approve(case=pending_case, user=approver, note="ok", changes={"service": "payment-gateway"})

    html = approver_client.get(change_url(pending_case), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    history = visible_text(html[html.rindex("<", 0, html.index('id="revisions-group"')) :])
    # Actions, field names and stored choices by their labels, never "create", "source_type", "AUTO".
    assert "创建" in history and "编辑" in history and "批准" in history
    assert "来源类型" in history and "自动（有用反馈）" in history and "服务" in history
    assert not {"create", "edit", "approve", "source_type", "AUTO", "status"} & set(history.split())


def test_a_decision_the_service_refuses_stays_on_the_form(approver_client, pending_case, monkeypatch):
    def refuse(**kwargs):
        raise ValidationError({"title": "refused for the test"})

    monkeypatch.setattr("cases.services.case_approve", refuse)
    url = change_url(pending_case, FILTERS)
    data = browser_post_data(approver_client.get(url))
    del data["_save"]

    response = approver_client.post(url, {**data, "_approve": "1"})

    assert response["Location"] == url
    assert CaseRevision.objects.filter(case=pending_case).count() == 1
    messages = [str(m) for m in response.wsgi_request._messages]
    assert any("refused for the test" in m for m in messages) and not any("approved" in m for m in messages)
