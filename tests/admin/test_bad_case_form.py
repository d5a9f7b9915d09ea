"""The bad-case form: the session beside it, a category suggested from the failure attribution,
and "Save & next open" through the list the reviewer came from."""

import pytest
from django.urls import reverse

from cases.models import BadCase, BadCaseCategory, BadCaseStatus
from cases.services import bad_case_update
from tests.admin.test_case_edits import browser_post_data
from tests.factories import bad_case_of, evaluated_session, feedback_of

pytestmark = pytest.mark.django_db

FILTERS = "status__exact=open"


def change_url(bad_case: BadCase, filters: str = "") -> str:
    url = reverse("admin:cases_badcase_change", args=[bad_case.pk])
    return f"{url}?_changelist_filters={filters.replace('=', '%3D')}" if filters else url


def test_the_panel_shows_query_answer_verdict_claims_feedback_and_attribution(
    reviewer_client, project, django_assert_max_num_queries
):
    session = evaluated_session(
        project,
        "s-panel-1",
        verdict="REJECT",
        feedback="not_useful",
        comment="根因不对 <b>x</b>",
        answer="order-service 的 5xx 错误率升至 25% <script>alert(1)</script>",
    )
    bad_case = BadCase.objects.get(session=session)

    with django_assert_max_num_queries(14) as captured:
        response = reviewer_client.get(change_url(bad_case))

    html = response.content.decode()
    panel = html[html.index('class="se-side-session') :]
    assert session.query in panel
    assert "order-service 的 5xx 错误率升至 25% &lt;script&gt;" in panel and "<script>alert(1)" not in panel
    assert "Reject" in panel  # the verdict badge
    assert "critical claim contradicted by evidence" in panel  # the verifier's rationale
    assert "Contradicted" in panel and "order-service 的 5xx 错误率升至 25%" in panel
    assert "根因不对 &lt;b&gt;x&lt;/b&gt;" in panel
    assert "Unsupported reasoning (verifier)" in panel

    # More feedback and more claims cost no more queries.
    for _ in range(3):
        feedback_of(session, "not_useful", comment="still wrong")
    with django_assert_max_num_queries(len(captured.captured_queries)):
        assert reviewer_client.get(change_url(bad_case)).status_code == 200


@pytest.mark.parametrize(
    ("verdict", "content", "category"),
    [
        ("REJECT", {}, BadCaseCategory.HALLUCINATION),  # unsupported reasoning
        ("REJECT", {"excerpt": "不存在的摘录 99%"}, BadCaseCategory.MISSING_EVIDENCE),  # citation failure
    ],
)
def test_the_category_is_suggested_from_the_failure_attribution(reviewer_client, project, verdict, content, category):
    session = evaluated_session(project, "s-suggest", verdict=verdict, **content)
    bad_case = bad_case_of(session)

    form = reviewer_client.get(change_url(bad_case)).context["adminform"].form

    assert form["category"].value() == category
    assert "Suggested from the failure attribution" in form.fields["category"].help_text


def test_the_suggestion_is_stored_when_saved_as_shown(reviewer_client, bad_case):
    data = browser_post_data(reviewer_client.get(change_url(bad_case)))
    assert data["category"]  # suggested, not yet stored
    assert BadCase.objects.get(pk=bad_case.pk).category == ""

    reviewer_client.post(change_url(bad_case), {**data, "status": "triaged"})

    assert BadCase.objects.get(pk=bad_case.pk).category == data["category"]


def test_a_category_a_person_chose_is_never_replaced(reviewer_client, reviewer, bad_case):
    bad_case_update(bad_case=bad_case, user=reviewer, category=BadCaseCategory.INCOMPLETE)

    form = reviewer_client.get(change_url(bad_case)).context["adminform"].form

    assert form["category"].value() == BadCaseCategory.INCOMPLETE
    assert not form.fields["category"].help_text


def test_save_and_next_open_triages_and_opens_the_next_open_bad_case_keeping_the_filters(reviewer_client, project):
    sessions = [evaluated_session(project, f"s-next-{i}", verdict="REJECT") for i in range(3)]
    newest, middle, oldest = [BadCase.objects.get(session=s) for s in reversed(sessions)]
    url = change_url(newest, FILTERS)
    data = browser_post_data(reviewer_client.get(url))
    del data["_save"]

    response = reviewer_client.post(
        url, {**data, "status": "triaged", "notes": "cited the wrong log", "_savenext": "1"}
    )

    assert response.status_code == 302
    assert response["Location"] == change_url(middle, FILTERS)
    newest.refresh_from_db()
    assert (newest.status, newest.notes) == (BadCaseStatus.TRIAGED, "cited the wrong log")


def test_save_and_next_open_skips_triaged_ones_and_ends_on_the_list(reviewer_client, reviewer, project):
    sessions = [evaluated_session(project, f"s-end-{i}", verdict="REJECT") for i in range(2)]
    newest, oldest = [BadCase.objects.get(session=s) for s in reversed(sessions)]
    bad_case_update(bad_case=oldest, user=reviewer, status=BadCaseStatus.TRIAGED)
    data = browser_post_data(reviewer_client.get(change_url(newest, FILTERS)))
    del data["_save"]

    response = reviewer_client.post(change_url(newest, FILTERS), {**data, "_savenext": "1"})

    assert response["Location"] == reverse("admin:cases_badcase_changelist") + "?" + FILTERS
    assert any("No more open bad cases" in str(m) for m in response.wsgi_request._messages)


def test_save_and_next_open_with_broken_filters_still_moves_on(reviewer_client, project):
    sessions = [evaluated_session(project, f"s-bad-{i}", verdict="REJECT") for i in range(2)]
    newest, oldest = [BadCase.objects.get(session=s) for s in reversed(sessions)]
    url = change_url(newest, "nonsense__field=1")
    data = browser_post_data(reviewer_client.get(url))
    del data["_save"]

    response = reviewer_client.post(url, {**data, "_savenext": "1"})

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:cases_badcase_change", args=[oldest.pk]))


def test_the_bad_case_form_speaks_chinese(reviewer_client, bad_case):
    html = reviewer_client.get(change_url(bad_case), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    for label in ("分诊并下一个", "此坏案例对应的会话", "无依据和相矛盾的论断", "根据失败归因"):
        assert label in html
    assert "Triage & next" not in html
    assert '<a href="/admin/cases/">案例</a>' in html  # the app, then the list: 案例 › 坏案例


def test_a_refused_save_shows_the_form_again_with_what_was_typed(reviewer_client, reviewer, project):
    session = evaluated_session(project, "s-refused", verdict="REJECT")
    closed = BadCase.objects.get(session=session)
    bad_case_update(bad_case=closed, user=reviewer, status=BadCaseStatus.FIXED)
    bad_case_of(session, source="reviewer")  # the session's open one now
    url = change_url(closed, FILTERS)
    data = browser_post_data(reviewer_client.get(url))
    del data["_save"]

    response = reviewer_client.post(
        url, {**data, "status": "open", "notes": "reopened: the fix did not hold", "_savenext": "1"}
    )

    # Reopening is refused: the form comes back with the reviewer's notes and the reason on the status.
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "another open bad case" in str(form.errors["status"])
    assert form["notes"].value() == "reopened: the fix did not hold"
    assert "reopened: the fix did not hold" in response.content.decode()
    assert BadCase.objects.get(pk=closed.pk).status == BadCaseStatus.FIXED
    chinese = reviewer_client.post(url, {**data, "status": "open", "_savenext": "1"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "另一个" in str(chinese.context["adminform"].form.errors["status"])


def test_the_panel_renders_the_answer_as_sanitised_markdown(reviewer_client, project):
    session = evaluated_session(
        project,
        "s-markdown",
        verdict="REJECT",
        answer="## 根因\n- order-service 的 5xx 错误率升至 25%\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>",
    )
    bad_case = BadCase.objects.get(session=session)

    html = reviewer_client.get(change_url(bad_case)).content.decode()

    answer = html[html.index('class="se-markdown se-answer"') :].split("</div>")[0]
    assert "<h2>根因</h2>" in answer and "<li>order-service" in answer
    assert 'href="javascript' not in answer and "<img" not in answer and "&lt;img" in answer
