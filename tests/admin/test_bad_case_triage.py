"""Bad-case triage in few steps: "Triage & next" on the form, the same triage for a selection, the
question in the list, and the keys said on the form."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from cases.models import BadCase, BadCaseCategory, BadCaseStatus
from cases.services import bad_case_update
from tests.admin.conftest import logged_in
from tests.admin.test_bad_case_form import FILTERS, change_url
from tests.admin.test_case_edits import browser_post_data
from tests.factories import UserFactory, evaluated_session

pytestmark = pytest.mark.django_db

LIST = reverse("admin:cases_badcase_changelist")


@pytest.fixture
def three_open(project):
    """Three open bad cases, newest first as the list shows them."""
    sessions = [
        evaluated_session(project, f"s-triage-{i}", verdict="REJECT", query=f"证书过期了吗？<b>第 {i} 次</b>")
        for i in range(3)
    ]
    return [BadCase.objects.get(session=s) for s in reversed(sessions)]


def test_triage_and_next_marks_an_open_bad_case_triaged_and_opens_the_next(reviewer_client, three_open):
    newest, middle, _oldest = three_open
    url = change_url(newest, FILTERS)
    data = browser_post_data(reviewer_client.get(url))
    del data["_save"]

    response = reviewer_client.post(url, {**data, "category": BadCaseCategory.JUDGE_ERROR, "_triagenext": "1"})

    assert response["Location"] == change_url(middle, FILTERS)
    newest.refresh_from_db()
    assert (newest.status, newest.category) == (BadCaseStatus.TRIAGED, BadCaseCategory.JUDGE_ERROR)


def test_triage_and_next_keeps_a_status_the_reviewer_chose(reviewer_client, three_open):
    newest = three_open[0]
    data = browser_post_data(reviewer_client.get(change_url(newest, FILTERS)))
    del data["_save"]

    reviewer_client.post(change_url(newest, FILTERS), {**data, "status": "wont_fix", "_triagenext": "1"})

    newest.refresh_from_db()
    assert newest.status == BadCaseStatus.WONT_FIX and newest.closed_at is not None


def test_the_form_says_its_keys_and_offers_triage_and_next_while_open(reviewer_client, reviewer, three_open):
    html = reviewer_client.get(change_url(three_open[0])).content.decode()
    assert 'id="se-triage-next"' in html and 'name="_triagenext"' in html and "Triage & next <kbd>Enter</kbd>" in html
    assert "selfeval/badcase.js" in html and "<kbd>1</kbd> Hallucination" in html
    assert "Judge error" in html and "<kbd>t</kbd> triaged" in html
    assert "<script>" not in html.split('id="se-badcase-keys"')[1].split("</div>")[0]

    bad_case_update(bad_case=three_open[1], user=reviewer, status=BadCaseStatus.TRIAGED)
    triaged = reviewer_client.get(change_url(three_open[1])).content.decode()
    assert 'name="_savenext"' in triaged and 'name="_triagenext"' not in triaged

    chinese = reviewer_client.get(change_url(three_open[0]), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "分诊并下一个" in chinese and "<kbd>1</kbd> 幻觉" in chinese


def test_the_list_shows_the_question_escaped(reviewer_client, three_open, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        response = reviewer_client.get(LIST)

    html = response.content.decode()
    assert 'class="se-query"' in html and "证书过期了吗？&lt;b&gt;第 0 次&lt;/b&gt;" in html
    assert "<b>第 0 次</b>" not in html
    assert "selfeval/triage.js" in html  # j / k / x / o on the list


def _bulk(client, bad_cases, **data):
    return client.post(
        LIST,
        {
            "action": "triage_selected",
            "_selected_action": [str(bad_case.pk) for bad_case in bad_cases],
            **data,
        },
    )


def test_bulk_triage_sets_category_and_status_and_adds_the_note_to_each(reviewer_client, reviewer, three_open):
    first, second, third = three_open
    bad_case_update(bad_case=second, user=reviewer, notes="seen before")

    page = _bulk(reviewer_client, [first, second])
    assert page.status_code == 200
    assert "Triage 2 bad cases" in page.content.decode()

    done = _bulk(
        reviewer_client,
        [first, second],
        apply="1",
        category=BadCaseCategory.WRONG_ROOT_CAUSE,
        status=BadCaseStatus.TRIAGED,
        note="the downstream payment timeout, not the pool",
    )

    assert done.status_code == 302
    rows = {b.pk: (b.status, b.category, b.notes) for b in BadCase.objects.all()}
    assert rows[first.pk] == ("triaged", "wrong_root_cause", "the downstream payment timeout, not the pool")
    assert rows[second.pk] == (
        "triaged",
        "wrong_root_cause",
        "seen before\nthe downstream payment timeout, not the pool",
    )
    assert rows[third.pk][:2] == ("open", "")
    assert any("2 bad cases updated" in str(m) for m in done.wsgi_request._messages)


def test_bulk_triage_keeps_what_is_left_blank(reviewer_client, reviewer, three_open):
    first = three_open[0]
    bad_case_update(bad_case=first, user=reviewer, category=BadCaseCategory.INCOMPLETE)

    _bulk(reviewer_client, [first], apply="1", category="", status=BadCaseStatus.FIXED, note="")

    first.refresh_from_db()
    assert (first.status, first.category, first.notes) == ("fixed", "incomplete", "")


def test_bulk_triage_with_nothing_chosen_changes_nothing(reviewer_client, three_open):
    response = _bulk(reviewer_client, three_open[:1], apply="1", category="", status="", note=" ")

    assert response.status_code == 400
    assert "Choose a category or a status" in response.content.decode()
    assert not BadCase.objects.exclude(status="open").exists()


def test_bulk_triage_needs_the_triage_permission(three_open):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_badcase"))
    client = logged_in(viewer)
    options = client.get(LIST).content.decode()
    assert "triage_selected" not in options

    _bulk(client, three_open[:1], apply="1", status=BadCaseStatus.FIXED)

    assert not BadCase.objects.exclude(status="open").exists()


def test_bulk_triage_reports_a_refused_reopening_and_triages_the_others(reviewer_client, reviewer, project):
    session = evaluated_session(project, "s-twice", verdict="REJECT")
    closed = BadCase.objects.get(session=session)
    bad_case_update(bad_case=closed, user=reviewer, status=BadCaseStatus.FIXED)
    reopened_elsewhere = BadCase.objects.create(session=session, project=project, source="reviewer")
    other = BadCase.objects.get(session=evaluated_session(project, "s-other", verdict="REJECT"))

    response = _bulk(reviewer_client, [closed, other], apply="1", status=BadCaseStatus.OPEN, note="again")

    messages = [str(m) for m in response.wsgi_request._messages]
    assert any(f"#{closed.pk}" in m and "another open bad case" in m for m in messages)
    assert BadCase.objects.get(pk=closed.pk).status == "fixed"
    assert BadCase.objects.get(pk=other.pk).notes == "again"
    assert BadCase.objects.get(pk=reopened_elsewhere.pk).status == "open"
