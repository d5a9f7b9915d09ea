"""Query counts per page stay fixed however many rows a page shows (no per-row queries)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from cases.services import bad_case_update
from tests.factories import bad_case_of, case_of, evaluated_session

pytestmark = pytest.mark.django_db

EXPECTED = {
    # 4 of every admin request (session, user, 2 permission reads) + the past days' change marks (none
    # here: a marked day costs the settle's statements once) and rollups + today
    # counted live (sessions, failed AIOps checks, reviews by session day and by review day) + the
    # triage queue's count, open bad cases, pending cases + the spans refused over OTLP. Any range, a
    # day or a year.
    "dashboard": 14,
    "calibration": 12,  # the dashboard's day figures + the claim table's two grouped reads
    "session_list": 7,  # + projects for the filter, capped count, the page
    "session_list_verdict": 7,
    "session_search": 8,  # + the exact session id / alert service lookup
    "inspector": 14,  # + the session and each kind of child (claim corrections too), once
    "triage": 7,
    "triage_mine": 7,
    # + the queue's project filter, this row and the next, the previous one, two capped counts
    "inspector_in_queue": 19,
    "case_list": 9,  # + projects, first service / error code values, capped count, the page
    "badcase_list": 8,
    "feedback_list": 6,
}


def urls(session):
    return {
        "dashboard": reverse("admin:index"),
        "calibration": reverse("admin:calibration"),
        "session_list": reverse("admin:diagnosis_diagnosissession_changelist"),
        "session_list_verdict": reverse("admin:diagnosis_diagnosissession_changelist")
        + "?verifier_verdict__exact=REJECT",
        "session_search": reverse("admin:diagnosis_diagnosissession_changelist") + "?q=%E8%AF%81%E4%B9%A6",
        "inspector": reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]),
        "triage": reverse("admin:backoffice_triageitem_changelist"),
        "triage_mine": reverse("admin:backoffice_triageitem_changelist") + "?assigned=me",
        "inspector_in_queue": reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])
        + "?_list=triage&_changelist_filters=reason%3Dreject",
        "case_list": reverse("admin:cases_case_changelist"),
        "badcase_list": reverse("admin:cases_badcase_changelist"),
        "feedback_list": reverse("admin:feedback_feedbackevent_changelist"),
    }


def add_rows(project, reviewer, start: int, count: int):
    """Rejected AIOps sessions voted not useful, each with a case and a bad case assigned to `reviewer`."""
    last = None
    for i in range(start, start + count):
        last = evaluated_session(
            project,
            f"s-{i:04}",
            verdict="REJECT",
            feedback="not_useful",
            mode="aiops",
            aiops_failure="evidence_tools_succeeded",
        )
        case_of(last)
        bad_case_update(bad_case=bad_case_of(last), user=reviewer, assignee=reviewer)
    return last


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured)


def test_query_counts_do_not_grow_with_rows(approver_client, approver, project):
    session = add_rows(project, approver, 0, 2)
    few = {name: count_queries(approver_client, url) for name, url in urls(session).items()}
    add_rows(project, approver, 2, 20)
    many = {name: count_queries(approver_client, url) for name, url in urls(session).items()}

    assert many == few
    # On PostgreSQL a two-character term first reads the gram index's statistics (pg_stats): is
    # the term too common for the index to help?
    gram_statistics = {"session_search": 1} if connection.vendor == "postgresql" else {}
    assert few == {name: count + gram_statistics.get(name, 0) for name, count in EXPECTED.items()}


def test_session_list_count_is_capped_by_a_limit(reviewer_client, project):
    evaluated_session(project, "s-1")
    with CaptureQueriesContext(connection) as captured:
        reviewer_client.get(reverse("admin:diagnosis_diagnosissession_changelist"))
    counts = [
        q["sql"].upper()
        for q in captured
        if "COUNT(" in q["sql"].upper() and "DIAGNOSIS_DIAGNOSISSESSION" in q["sql"].upper()
    ]

    assert counts
    assert all("LIMIT" in sql for sql in counts)
