"""Decide and move on: the inspector walks the list it was opened from, with that list's filters."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from core.adminkit.sequence import list_place
from diagnosis.models import DiagnosisSession, SessionReview
from tests import clock
from tests.factories import evaluated_session

pytestmark = pytest.mark.django_db

TRIAGE = reverse("admin:backoffice_triageitem_changelist")
SESSIONS = reverse("admin:diagnosis_diagnosissession_changelist")


def inspector(session, **params) -> str:
    url = reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


@pytest.fixture
def queue(project):
    """Five sessions waiting for review, oldest first: three REJECT, two LOW_CONFID; one PASS."""
    sessions = [
        evaluated_session(
            project,
            f"s-{i}",
            verdict=["REJECT", "LOW_CONFID"][i % 2 if i < 4 else 0],
            created_at=clock.ago(hours=10 - i),
        )
        for i in range(5)
    ]
    evaluated_session(project, "s-pass", created_at=clock.ago(hours=2))
    return sessions


def test_queue_rows_open_the_inspector_with_the_queue_and_its_filters(reviewer_client, queue):
    response = reviewer_client.get(TRIAGE, {"reason": "reject"})

    html = response.content.decode()
    assert (
        f'href="{inspector(queue[0], _changelist_filters="reason%3Dreject", _list="triage")}"'.replace("&", "&amp;")
        in html
    )


def test_session_list_rows_name_the_session_list(reviewer_client, queue):
    html = reviewer_client.get(SESSIONS, {"mode__exact": "chat"}).content.decode()

    assert "?_changelist_filters=mode__exact%3Dchat&amp;_list=sessions" in html


def test_inspector_shows_its_place_in_the_filtered_queue_and_walks_it(reviewer_client, queue):
    # REJECT sessions, oldest first: s-0, s-2, s-4.
    response = reviewer_client.get(inspector(queue[2], _list="triage", _changelist_filters="reason%3Dreject"))

    context = response.context["list_context"]
    assert (context.place.position, context.place.total) == (2, 3)
    assert context.previous_url == inspector(queue[0], _list="triage", _changelist_filters="reason%3Dreject")
    assert context.next_url == inspector(queue[4], _list="triage", _changelist_filters="reason%3Dreject")
    html = response.content.decode()
    assert "2 / 3" in html
    breadcrumb = html[html.index('class="breadcrumbs"') :][:600]
    assert (
        f'href="{TRIAGE}?reason=reject"' in breadcrumb and "Triage queue" in breadcrumb and "(filtered)" in breadcrumb
    )


def test_breadcrumb_names_the_session_list_when_opened_from_it(reviewer_client, queue):
    response = reviewer_client.get(
        inspector(queue[1], _list="sessions", _changelist_filters="verifier_verdict__exact%3DLOW_CONFID")
    )

    html = response.content.decode()
    breadcrumb = html[html.index('class="breadcrumbs"') :][:600]
    assert f'href="{SESSIONS}?verifier_verdict__exact=LOW_CONFID"' in breadcrumb and "Sessions" in breadcrumb
    assert "Triage queue" not in breadcrumb
    # Newest first in the session list: s-3, then s-1.
    assert (response.context["list_context"].place.position, response.context["list_context"].place.total) == (2, 2)


def test_back_link_lands_on_the_page_that_holds_the_session(reviewer_client, queue, settings):
    from backoffice.triage import TriageQueueAdmin

    TriageQueueAdmin.list_per_page, per_page = 2, TriageQueueAdmin.list_per_page
    try:
        response = reviewer_client.get(inspector(queue[4], _list="triage", _changelist_filters="p%3D1"))
    finally:
        TriageQueueAdmin.list_per_page = per_page

    assert response.context["list_context"].list_url == f"{TRIAGE}?p=3"


def test_save_review_and_next_opens_the_next_session_of_the_same_filtered_queue(reviewer_client, reviewer, queue):
    response = reviewer_client.post(
        reverse("admin:diagnosis_diagnosissession_review", args=[queue[0].pk]),
        {
            "judgement": "wrong",
            "verifier_was_right": "yes",
            "next": "next",
            "_list": "triage",
            "_changelist_filters": "reason=reject",
        },
    )

    assert response.status_code == 302
    assert response["Location"] == inspector(queue[2], _list="triage", _changelist_filters="reason%3Dreject")
    assert SessionReview.objects.get().session_id == queue[0].pk
    # s-0 left the queue: s-2 is now the first of two.
    place = reviewer_client.get(response["Location"]).context["list_context"].place
    assert (place.position, place.total) == (1, 2)


def test_save_review_and_next_at_the_end_returns_to_the_list(reviewer_client, queue):
    response = reviewer_client.post(
        reverse("admin:diagnosis_diagnosissession_review", args=[queue[4].pk]),
        {
            "judgement": "wrong",
            "verifier_was_right": "no",
            "next": "next",
            "_list": "triage",
            "_changelist_filters": "reason=reject",
        },
    )

    assert response["Location"] == f"{TRIAGE}?reason=reject"


def test_save_review_alone_stays_on_the_session_with_its_list(reviewer_client, queue):
    response = reviewer_client.post(
        reverse("admin:diagnosis_diagnosissession_review", args=[queue[1].pk]),
        {"judgement": "correct", "verifier_was_right": "no", "next": "stay", "_list": "triage"},
    )

    assert response["Location"] == inspector(queue[1], _list="triage")
    place = reviewer_client.get(response["Location"]).context["list_context"].place
    assert place.position is None and place.next_pk == queue[2].pk  # reviewed: out of the queue


def test_a_reviewed_session_opened_from_the_queue_still_links_onwards(reviewer_client, reviewer, queue):
    from tests.factories import review_of

    review_of(queue[2], reviewer, judgement="wrong")
    html = reviewer_client.get(inspector(queue[2], _list="triage")).content.decode()

    assert "not in this list any more (4 left)" in html


def test_a_form_error_keeps_the_list(reviewer_client, queue):
    response = reviewer_client.post(
        reverse("admin:diagnosis_diagnosissession_review", args=[queue[0].pk]),
        {"judgement": "great", "next": "next", "_list": "triage", "_changelist_filters": "reason=reject"},
    )

    assert response.status_code == 400
    assert response.context["list_context"].next_url.startswith(inspector(queue[2]))
    assert not SessionReview.objects.exists()


@pytest.mark.parametrize(
    "filters", ["evidence_score__gt%3Dabc", "o%3D99", "p%3D-4", "project__id__exact%3D9999999999999999999", "q%3D%25"]
)
def test_bad_list_filters_never_break_the_inspector(reviewer_client, queue, filters):
    response = reviewer_client.get(inspector(queue[0], _list="triage", _changelist_filters=filters))

    assert response.status_code == 200
    assert response.context["list_context"].list_url.startswith(TRIAGE)


def test_unknown_list_or_none_shows_the_plain_breadcrumb(reviewer_client, queue):
    for url in (inspector(queue[0]), inspector(queue[0], _list="nonsense")):
        response = reviewer_client.get(url)
        assert response.context["list_context"] is None
        assert f'href="{SESSIONS}"' in response.content.decode()


def test_queue_sorted_by_a_nullable_column_walks_every_row_once(reviewer_client, project, queue):
    from backoffice.models import TriageItem

    # Sorted by evidence score (a nullable column): walk by next links from the first row.
    query = "o=5"
    first = reviewer_client.get(f"{TRIAGE}?{query}").context["cl"].result_list[0]
    seen, url = [], inspector(first, _list="triage", _changelist_filters="o%3D5")
    while url:
        context = reviewer_client.get(url).context["list_context"]
        seen.append(context.place.position)
        url = context.next_url
    assert seen == [1, 2, 3, 4, 5]
    assert TriageItem.objects.filter(needs_review=True).count() == 5


def test_list_place_handles_nulls_in_both_directions(project):
    sessions = [evaluated_session(project, f"n-{i}", created_at=clock.ago(hours=i)) for i in range(4)]
    DiagnosisSession.objects.filter(pk__in=[sessions[1].pk, sessions[2].pk]).update(evidence_score=None)
    for ordering in (["evidence_score", "pk"], ["-evidence_score", "pk"]):
        queryset = DiagnosisSession.objects.order_by(*ordering)
        expected = list(queryset.values_list("pk", flat=True))
        walked = []
        for pk in expected:
            place = list_place(queryset, DiagnosisSession.objects.get(pk=pk))
            walked.append((place.position, place.previous_pk, place.next_pk))
        assert walked == [
            (i + 1, expected[i - 1] if i else None, expected[i + 1] if i + 1 < len(expected) else None)
            for i in range(len(expected))
        ], ordering


def test_inspector_with_a_list_costs_a_fixed_number_of_queries(reviewer_client, queue, django_assert_max_num_queries):
    url = inspector(queue[2], _list="triage", _changelist_filters="reason%3Dreject")
    plain = inspector(queue[2])
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as without:
        reviewer_client.get(plain)
    with CaptureQueriesContext(connection) as with_list:
        reviewer_client.get(url)
    # The projects of the queue's filter, the row and the next one, the previous one, two capped counts.
    assert len(with_list) - len(without) == 5
    assert parse_qs(urlsplit(url).query)["_list"] == ["triage"]


def test_the_decision_bar_bulk_page_and_queue_speak_chinese(reviewer_client, reviewer, queue):
    from backoffice.services.sharing import review_lock_refresh, triage_assignments_take
    from tests.admin.conftest import _user_in

    alice = _user_in("Reviewer", "alice")
    review_lock_refresh(session=queue[1], user=alice)
    triage_assignments_take(session_pks=[queue[1].pk], user=alice)
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}

    html = reviewer_client.get(inspector(queue[1], _list="triage"), **zh).content.decode()
    for text in ("保存审核并下一个", "跳过", "快捷键：", "分诊队列", "alice 正在审核此会话（刚刚打开）", "自 "):
        assert text in html, text
    for english in ("Save review &amp; next", "Skip", "Keys:", "is reviewing", "Assigned to"):
        assert english not in html, english
    queue_html = reviewer_client.get(TRIAGE, **zh).content.decode()
    assert "我的队列" in queue_html and "alice 审核中" in queue_html and "指派给我的" in queue_html
    bulk = reviewer_client.post(
        TRIAGE, {"action": "mark_reviewed", "_selected_action": [str(queue[0].pk)], "index": "0"}, **zh
    ).content.decode()
    assert "保存这些审核" in bulk and "其他页已选" not in bulk and "Save these reviews" not in bulk


def test_past_the_count_cap_the_place_says_more_than_the_cap(reviewer_client, queue, monkeypatch):
    from backoffice import listing

    monkeypatch.setattr(listing, "PLACE_COUNT_CAP", 2)

    response = reviewer_client.get(inspector(queue[4], _list="triage", _changelist_filters="p%3D1"))

    context = response.context["list_context"]
    assert (context.position_label, context.total_label) == ("2+", "2+")
    assert context.list_url == f"{TRIAGE}?p=1"  # the page is unknown past the cap: kept as it came
    assert context.previous_url.startswith(inspector(queue[3])) and context.next_url == ""
