"""Every admin page renders for a reviewer, and links lead to the lists behind the figures."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.adminkit.paging import CappedCountPaginator
from diagnosis.models import DiagnosisSession
from diagnosis.services.producers import pipeline
from tests import clock
from tests.factories import aiops_payload, chat_payload, evaluated_session, session_ingest_evaluated

pytestmark = pytest.mark.django_db


def test_dashboard_counts_the_range_and_links_to_filtered_lists(reviewer_client, project):
    evaluated_session(project, "s-pass", verdict="PASS", feedback="useful")
    evaluated_session(project, "s-reject", verdict="REJECT", feedback="not_useful")
    evaluated_session(project, "s-old", created_at=clock.ago(days=90))

    response = reviewer_client.get(reverse("admin:index"))

    assert response.status_code == 200
    board = response.context["board"]
    assert board.total == 2
    assert board.useful == 1 and board.not_useful == 1
    assert board.verdicts["PASS"] == 1 and board.verdicts["REJECT"] == 1
    assert board.needs_review == 1
    reject = next(v for v in response.context["verdicts"] if v["key"] == "reject")
    listed = reviewer_client.get(reject["url"])
    assert listed.status_code == 200
    assert [s.session_id for s in listed.context["cl"].result_list] == ["s-reject"]


def test_dashboard_date_range_selects_older_sessions(reviewer_client, project):
    old = timezone.localdate() - dt.timedelta(days=90)
    evaluated_session(project, "s-old", created_at=clock.ago(days=90))

    response = reviewer_client.get(reverse("admin:index"), {"start": old.isoformat(), "end": old.isoformat()})

    assert response.context["board"].total == 1


def test_dashboard_bad_range_falls_back_and_says_so(reviewer_client):
    response = reviewer_client.get(reverse("admin:index"), {"start": "yesterday"})

    assert response.status_code == 200
    assert "not a date" in response.content.decode()


def test_aiops_check_failures_are_counted_and_filterable(reviewer_client, project):
    evaluated_session(project, "a-1", mode="aiops", aiops_failure="evidence_tools_succeeded")
    evaluated_session(project, "a-2", mode="aiops")

    response = reviewer_client.get(reverse("admin:index"))

    failures = dict(response.context["board"].aiops_failures)
    assert failures["evidence_tools_succeeded"] == 1
    assert set(failures.values()) == {1}  # a-2 passed every check
    link = next(row["url"] for row in response.context["aiops"] if row["check"] == "evidence_tools_succeeded")
    listed = reviewer_client.get(link)
    assert [s.session_id for s in listed.context["cl"].result_list] == ["a-1"]


def test_calibration_matrix_counts_and_links(reviewer_client, project):
    evaluated_session(project, "s-1", verdict="PASS", feedback="useful")
    evaluated_session(project, "s-2", verdict="PASS", feedback="not_useful")
    evaluated_session(project, "s-3", verdict="REJECT", feedback="not_useful")

    response = reviewer_client.get(reverse("admin:calibration"))

    assert response.status_code == 200
    matrix = response.context["by_feedback"]
    pass_row = matrix["rows"][0]
    assert [cell["count"] for cell in pass_row["cells"]] == [1, 1, 0]
    assert pass_row["agreement"] == 50.0
    assert matrix["agreement"] == pytest.approx(66.7)
    listed = reviewer_client.get(pass_row["cells"][1]["url"])
    assert [s.session_id for s in listed.context["cl"].result_list] == ["s-2"]


def test_session_inspector_shows_three_views_and_highlighted_excerpt(reviewer_client, rejected_session):
    response = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[rejected_session.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    for heading in ("Execution", "Evidence", "User", "Tool invocations", "Raw self_evaluation JSON"):
        assert heading in html
    assert "<mark>5xx 错误率升至 12.5%</mark>" in html  # the cited excerpt, marked in its ref
    assert "l0_exact_match" in html and "+35" in html
    assert "wrong root cause" in html
    assert "VERIFIED" in html


def test_session_list_filters_by_verdict(reviewer_client, session, rejected_session):
    response = reviewer_client.get(
        reverse("admin:diagnosis_diagnosissession_changelist"), {"verifier_verdict__exact": "REJECT"}
    )

    assert response.status_code == 200
    assert [s.session_id for s in response.context["cl"].result_list] == [rejected_session.session_id]


def test_session_search_is_exact(reviewer_client, session, rejected_session):
    response = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_changelist"), {"q": session.session_id})

    assert [s.session_id for s in response.context["cl"].result_list] == [session.session_id]


def test_triage_queue_lists_sessions_needing_review_oldest_first(reviewer_client, project):
    now = timezone.now()
    evaluated_session(project, "s-new", verdict="REJECT", created_at=now - dt.timedelta(hours=1))
    evaluated_session(project, "s-older", verdict="LOW_CONFID", created_at=now - dt.timedelta(hours=5))
    evaluated_session(project, "s-fine", verdict="PASS", created_at=now - dt.timedelta(hours=9))

    response = reviewer_client.get(reverse("admin:backoffice_triageitem_changelist"))

    assert response.status_code == 200
    assert [s.session_id for s in response.context["cl"].result_list] == ["s-older", "s-new"]
    assert response.context["cl"].result_count == 2
    filtered = reviewer_client.get(reverse("admin:backoffice_triageitem_changelist"), {"reason": "reject"})
    assert [s.session_id for s in filtered.context["cl"].result_list] == ["s-new"]
    # The old address of the queue still leads to it.
    moved = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_triage"))
    assert moved.status_code == 302 and moved["Location"] == reverse("admin:backoffice_triageitem_changelist")


def test_triage_queue_pages_without_counting_everything(reviewer_client, project):
    base = clock.ago(days=1)
    for i in range(55):
        evaluated_session(project, f"s-{i:03}", verdict="REJECT", created_at=base + dt.timedelta(minutes=i))

    first = reviewer_client.get(reverse("admin:backoffice_triageitem_changelist"))
    second = reviewer_client.get(reverse("admin:backoffice_triageitem_changelist"), {"p": 2})

    assert len(first.context["cl"].result_list) == 50 and first.context["cl"].multi_page
    assert [s.session_id for s in second.context["cl"].result_list] == [f"s-{i:03}" for i in range(50, 55)]
    assert isinstance(first.context["cl"].paginator, CappedCountPaginator)  # never a full count


def test_case_change_view_shows_case_and_session_side_by_side(approver_client, pending_case):
    response = approver_client.get(reverse("admin:cases_case_change", args=[pending_case.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    assert "se-side-session" in html
    assert pending_case.session.answer in html


def test_every_changelist_renders(reviewer_client, pending_case, bad_case):
    for name in (
        "diagnosis_diagnosissession",
        "diagnosis_sessionreview",
        "diagnosis_claimcheck",
        "tenancy_project",
        "feedback_feedbackevent",
        "cases_case",
        "cases_badcase",
    ):
        response = reviewer_client.get(reverse(f"admin:{name}_changelist"))
        assert response.status_code == 200, name


def test_session_list_never_counts_the_whole_table(reviewer_client, project, django_assert_max_num_queries):
    evaluated_session(project, "s-1")

    with CaptureQueriesContext(connection) as queries:
        reviewer_client.get(reverse("admin:diagnosis_diagnosissession_changelist"))
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert counts and all("LIMIT" in sql.upper() for sql in counts)
    assert DiagnosisSession.objects.count() == 1


def test_inspector_names_only_layers_the_pipeline_runs_as_missing(reviewer_client, project, monkeypatch):
    """An AIOps session without executor output gets no verifier layer by design: not "missing"."""
    aiops = session_ingest_evaluated(project, aiops_payload(sessionId="s-aiops-plain"))

    def verifier_crashes(*args, **kwargs):
        raise RuntimeError("judge unavailable")

    monkeypatch.setattr(pipeline, "_verifier_chain", verifier_crashes)
    chat = session_ingest_evaluated(project, chat_payload(sessionId="s-chat-broken"))
    assert chat.evaluation_state == "PARTIAL" and "verifier_evaluation" not in chat.self_evaluation

    aiops_html = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[aiops.pk])).content
    chat_html = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[chat.pk])).content

    assert b"Missing layers" not in aiops_html
    assert b"Missing layers" in chat_html and b"verifier_evaluation" in chat_html


def test_inspector_shows_whole_number_facts_without_a_decimal_point():
    from backoffice.inspector import fact_label
    from diagnosis.evaluation_layers import FactCheck

    facts = [FactCheck(kind="quantity", value=96.0, text="96.0%"), FactCheck(kind="quantity", value=0.5)]

    assert [fact_label(fact) for fact in facts] == ["96", "0.5"]


def test_inspector_names_an_unreadable_layer_with_its_error(reviewer_client, project):
    session = evaluated_session(project, "s-broken-aiops")
    broken = {**session.self_evaluation, "aiops_rule_evaluation": {"verdict": "FAIL", "checks": "nope"}}
    type(session).objects.filter(pk=session.pk).update(self_evaluation=broken)

    html = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])).content.decode()

    assert "Unreadable layer aiops_rule_evaluation" in html and "$.checks" in html
    assert "Missing layers" not in html
    assert "se-claim-supported" in html  # the readable layers are still shown
