"""CSV export of the session, case and bad-case lists: the selection or the whole filtered list, streamed."""

import csv
import io
import logging

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from core.adminkit.csv_export import csv_cell
from tests import clock
from tests.admin.conftest import logged_in
from tests.factories import UserFactory, bad_case_of, case_of, evaluated_session

pytestmark = pytest.mark.django_db

SESSIONS = "admin:diagnosis_diagnosissession"
CASES = "admin:cases_case"
BAD_CASES = "admin:cases_badcase"


def download(response) -> list[list[str]]:
    """The rows of a CSV response, after checking it is the UTF-8-with-BOM attachment Excel expects."""
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="')
    content = b"".join(response.streaming_content)
    assert content.startswith("\ufeff".encode())
    return list(csv.reader(io.StringIO(content.decode("utf-8-sig"))))


def export_list(client: Client, admin: str, query: str = "") -> list[list[str]]:
    return download(client.get(reverse(f"{admin}_export_csv") + query))


@pytest.fixture
def sessions(project, other_project):
    """Three sessions, newest first: a PASS, a REJECT voted not useful, and another project's PASS."""
    return [
        evaluated_session(
            project, "s-csv-pass", created_at=clock.ago(hours=3), query="订单服务 5xx 突增，原因是什么？"
        ),
        evaluated_session(
            project, "s-csv-reject", verdict="REJECT", feedback="not_useful", created_at=clock.ago(hours=5)
        ),
        evaluated_session(other_project, "s-csv-other", created_at=clock.ago(hours=7)),
    ]


def test_the_filtered_list_is_exported_with_chinese_text_intact(reviewer_client, sessions):
    rows = export_list(reviewer_client, SESSIONS)

    header, *body = rows
    assert header[:6] == ["session_id", "project", "mode", "language", "status", "query"]
    assert [row[0] for row in body] == ["s-csv-pass", "s-csv-reject", "s-csv-other"]  # the list's order
    first = dict(zip(header, body[0], strict=True))
    assert first["query"] == "订单服务 5xx 突增，原因是什么？"
    assert (first["project"], first["verifier_verdict"], first["needs_review"]) == ("acme-chat", "PASS", "false")
    assert first["created_at"] == sessions[0].created_at.isoformat()
    assert first["reviewed_at"] == ""


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?verifier_verdict__exact=REJECT", ["s-csv-reject"]),
        ("?feedback__exact=not_useful&mode__exact=chat", ["s-csv-reject"]),
        ("?q=s-csv-other", ["s-csv-other"]),  # the list's search
        ("?o=-1", ["s-csv-reject", "s-csv-pass", "s-csv-other"]),  # the list's sort (session id, descending)
        ("?p=2", ["s-csv-pass", "s-csv-reject", "s-csv-other"]),  # every page, not one
    ],
)
def test_the_export_follows_the_lists_filters_search_and_order(reviewer_client, sessions, query, expected):
    assert [row[0] for row in export_list(reviewer_client, SESSIONS, query)[1:]] == expected


def test_the_project_filter_scopes_the_export(reviewer_client, sessions, other_project):
    rows = export_list(reviewer_client, SESSIONS, f"?project__id__exact={other_project.pk}")

    assert [row[0] for row in rows[1:]] == ["s-csv-other"]


def test_bad_filters_send_back_to_the_list(reviewer_client, sessions):
    response = reviewer_client.get(reverse(f"{SESSIONS}_export_csv") + "?evidence_score__gte=lots")

    assert response.status_code == 302
    assert response["Location"] == reverse(f"{SESSIONS}_changelist") + "?e=1"


def test_the_list_links_to_the_export_of_what_it_shows(reviewer_client, sessions):
    response = reviewer_client.get(reverse(f"{SESSIONS}_changelist") + "?verifier_verdict__exact=REJECT&p=1")

    url = reverse(f"{SESSIONS}_export_csv") + "?verifier_verdict__exact=REJECT"
    assert f'<a href="{url}" class="se-export-csv">Export CSV</a>' in response.content.decode()


def test_the_action_exports_the_selection_only(reviewer_client, sessions, caplog):
    selected = [sessions[2].pk, sessions[0].pk]

    with caplog.at_level(logging.INFO, logger="selfeval.admin.export"):
        response = reviewer_client.post(
            reverse(f"{SESSIONS}_changelist"), {"action": "export_csv", "_selected_action": selected, "index": "0"}
        )
        rows = download(response)

    assert [row[0] for row in rows[1:]] == ["s-csv-pass", "s-csv-other"]
    assert caplog.messages == ["bob exported 2 diagnosis sessions as CSV (selection)"]


def test_the_action_across_every_page_exports_the_filtered_list(reviewer_client, sessions):
    response = reviewer_client.post(
        reverse(f"{SESSIONS}_changelist") + "?mode__exact=chat",
        {"action": "export_csv", "_selected_action": [sessions[0].pk], "select_across": "1", "index": "0"},
    )

    assert [row[0] for row in download(response)[1:]] == ["s-csv-pass", "s-csv-reject", "s-csv-other"]


def test_the_download_is_logged_with_the_filters(reviewer_client, sessions, caplog):
    with caplog.at_level(logging.INFO, logger="selfeval.admin.export"):
        export_list(reviewer_client, SESSIONS, "?verifier_verdict__exact=REJECT")

    assert caplog.messages == [
        "bob exported 1 diagnosis sessions as CSV (filtered list: verifier_verdict__exact=REJECT)"
    ]


def test_cells_a_spreadsheet_would_run_are_quoted(reviewer_client, project):
    evaluated_session(project, "s-formula", query='=HYPERLINK("http://evil.example","查看")')

    first = dict(zip(*export_list(reviewer_client, SESSIONS)[:2], strict=True))

    assert first["query"] == '\'=HYPERLINK("http://evil.example","查看")'


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+86 10 1234", "'+86 10 1234"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=cmd", "'\t=cmd"),
        ("\r=cmd", "'\r=cmd"),
        ("a=b", "a=b"),
        ("", ""),
        (None, ""),
        (-5, -5),
        (0.25, 0.25),
        (True, "true"),
    ],
)
def test_csv_cell(value, cell):
    assert csv_cell(value) == cell


def test_cases_and_bad_cases_export_their_lists(approver_client, sessions):
    case = case_of(sessions[0])
    case.title = "+cmd|' /C calc'!A0"
    case.save(update_fields=["title"])
    bad_case = bad_case_of(sessions[1])

    cases = export_list(approver_client, CASES, "?status__exact=pending")
    bad_cases = export_list(approver_client, BAD_CASES, f"?q={sessions[1].session_id}")

    case_row = dict(zip(*cases, strict=True))
    assert (case_row["case_id"], case_row["session_id"], case_row["project"]) == (
        str(case.pk),
        "s-csv-pass",
        "acme-chat",
    )
    assert case_row["title"] == "'+cmd|' /C calc'!A0"
    assert len(bad_cases) == 2
    bad_row = dict(zip(*bad_cases, strict=True))
    assert (bad_row["bad_case_id"], bad_row["session_id"], bad_row["status"]) == (
        str(bad_case.pk),
        "s-csv-reject",
        "open",
    )
    assert bad_row["feedback_count"] == "1" and bad_row["assignee"] == ""


@pytest.mark.parametrize("admin", [SESSIONS, CASES, BAD_CASES])
def test_staff_without_the_view_permission_cannot_export(admin, sessions):
    staff = UserFactory(username="erin", is_staff=True)  # staff, but no permission on these models
    staff.user_permissions.add(Permission.objects.get(codename="view_verificationlog"))
    client = logged_in(staff)

    assert client.get(reverse(f"{admin}_export_csv")).status_code == 403
    response = client.post(
        reverse(f"{admin}_changelist"), {"action": "export_csv", "_selected_action": [sessions[0].pk], "index": "0"}
    )
    assert response.status_code == 403  # the list itself is refused, and its actions with it


@pytest.mark.parametrize("admin", [SESSIONS, CASES, BAD_CASES])
def test_non_staff_are_sent_to_the_login(admin, outsider):
    response = logged_in(outsider).get(reverse(f"{admin}_export_csv"))

    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def test_the_export_reads_a_fixed_number_of_queries_whatever_the_rows(
    reviewer_client, project, django_assert_max_num_queries
):
    def queries_for_export() -> int:
        with django_assert_max_num_queries(100) as captured:
            export_list(reviewer_client, SESSIONS)
        return len(captured)

    evaluated_session(project, "s-count-0")
    one = queries_for_export()
    for number in range(1, 6):
        evaluated_session(project, f"s-count-{number}")

    # The login (session, user, user and group permissions), the list's project filter choices and
    # its capped count (the changelist is built as for the page), then the rows: one cursor.
    assert one == 7
    assert queries_for_export() == one


def test_the_chinese_admin_offers_the_export(reviewer_client, sessions):
    response = reviewer_client.get(reverse(f"{BAD_CASES}_changelist"), HTTP_ACCEPT_LANGUAGE="zh-hans")

    html = response.content.decode()
    assert "导出 CSV" in html and "将所选项导出为 CSV" in html
