"""Editing a case in the admin records exactly what the editor changed."""

import pytest
from django import forms
from django.urls import reverse

from cases.models import CaseRevision
from cases.services import case_create_from_session
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db

ANSWER = "## 根因\n连接池耗尽。\n慢查询占满连接。\n## 处理建议\n1. 扩大连接池\n2. 优化慢查询"


def browser_post_data(response) -> dict[str, str]:
    """What a browser submits for the change form as rendered: every field's initial value,
    textareas with CRLF line endings (as HTML forms send them), and the inline management forms."""
    form = response.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form[name].value()
        data[name] = "" if value is None else str(value)
        if isinstance(field.widget, forms.Textarea):
            data[name] = data[name].replace("\n", "\r\n")
    for formset in response.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        data.update({management.add_prefix(name): str(management[name].value()) for name in management.fields})
    return {**data, "_save": "1"}


def test_saving_an_unchanged_case_whose_textareas_send_crlf_records_no_edit(project, approver_client):
    case = case_create_from_session(session=make_session(project, answer=ANSWER))
    url = reverse("admin:cases_case_change", args=[case.pk])
    data = browser_post_data(approver_client.get(url))
    assert "\r\n" in data["root_cause"]

    response = approver_client.post(url, data)

    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    assert not CaseRevision.objects.filter(case=case, action="edit").exists()
    case.refresh_from_db()
    assert "\r" not in case.root_cause + case.solution


def test_a_real_edit_is_recorded_with_lf_line_endings(project, approver_client):
    case = case_create_from_session(session=make_session(project, answer=ANSWER))
    url = reverse("admin:cases_case_change", args=[case.pk])
    data = browser_post_data(approver_client.get(url))

    approver_client.post(url, {**data, "solution": data["solution"] + "\r\n3. 加告警"})

    revision = CaseRevision.objects.get(case=case, action="edit")
    assert revision.changes == {"solution": [case.solution, case.solution + "\n3. 加告警"]}
