"""AIOps check rows: written with the AIOps layer, replaced with it, removed with it, backfilled."""

import importlib

import pytest
from django.apps import apps
from django.utils import timezone

from core.tenancy.access import Access
from diagnosis.constants import Layer
from diagnosis.models import AiOpsCheck, DiagnosisSession
from diagnosis.services.evaluation import session_evaluate
from reporting.selectors import DateRange, dashboard_get
from tests.factories import (
    aiops_payload,
    chat_payload,
    diagnosis_payload,
    session_ingest,
    session_ingest_evaluated,
)

pytestmark = pytest.mark.django_db

backfill = importlib.import_module("diagnosis.migrations.0006_backfill_aiops_checks").backfill


def rows(session) -> dict[str, tuple]:
    return {
        check.name: (check.passed, check.severity, check.applicable, check.reason)
        for check in AiOpsCheck.objects.filter(session=session)
    }


def layer_checks(session) -> dict[str, tuple]:
    session.refresh_from_db()
    return {
        c["check"]: (c["passed"], c["severity"], c["applicable"], c["reason"])
        for c in session.self_evaluation[Layer.AIOPS]["checks"]
    }


def test_every_check_of_the_layer_is_a_row(project):
    session = session_ingest_evaluated(project, aiops_payload())

    assert rows(session) == layer_checks(session)
    assert rows(session)["evidence_metrics"][:3] == (False, "warning", True)  # the metrics call failed
    assert rows(session)["unrelated_alerts_not_main_object"][0] is True


def test_re_evaluation_replaces_the_rows(project):
    payload = diagnosis_payload("a-1", mode="aiops", aiops_failure="evidence_tools_succeeded")
    session = session_ingest_evaluated(project, payload)
    assert rows(session)["evidence_tools_succeeded"][0] is False

    session_ingest(project, diagnosis_payload("a-1", mode="aiops"))  # the agent fixed its tool calls
    session_evaluate(session_pk=session.pk)

    assert rows(session) == layer_checks(session)
    assert rows(session)["evidence_tools_succeeded"][0] is True


def test_rows_of_a_check_no_longer_in_the_layer_go(project, settings):
    session = session_ingest_evaluated(project, aiops_payload())
    settings.SELFEVAL_AIOPS_TOOL_CATEGORIES = {"logs": ["query_logs"]}

    session_evaluate(session_pk=session.pk)

    assert set(rows(session)) == set(layer_checks(session))
    assert "evidence_metrics" not in rows(session) and "evidence_logs" in rows(session)


def test_rows_go_with_the_layer(project):
    session = session_ingest_evaluated(project, aiops_payload(sessionId="s-mode"))
    assert rows(session)

    session_ingest(project, chat_payload(sessionId="s-mode"))  # re-posted as a chat session
    session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert Layer.AIOPS not in session.self_evaluation
    assert not AiOpsCheck.objects.filter(session=session).exists()


def test_rows_stay_with_the_layer_when_the_aiops_producer_fails(project, monkeypatch):
    session = session_ingest_evaluated(project, aiops_payload())
    before = rows(session)

    def broken(**kwargs):
        raise RuntimeError("aiops producer down")

    monkeypatch.setattr("diagnosis.services.producers.pipeline.aiops_rule_evaluation", broken)
    assert session_evaluate(session_pk=session.pk) == "PARTIAL"

    assert rows(session) == before == layer_checks(session)


@pytest.mark.parametrize("failure", [None, "evidence_tools_succeeded"])
def test_statements_per_aiops_evaluation_are_constant(project, django_assert_num_queries, failure):
    session = session_ingest(project, diagnosis_payload("a-1", mode="aiops", aiops_failure=failure))
    session_evaluate(session_pk=session.pk)

    # The chat session's 15 (test_evaluation.py) + the stale-check DELETE and the check upsert.
    with django_assert_num_queries(17):
        session_evaluate(session_pk=session.pk)


def test_the_dashboard_counts_the_rows_of_the_range(project):
    failing = diagnosis_payload("a-1", mode="aiops", aiops_failure="evidence_tools_succeeded")
    session = session_ingest_evaluated(project, failing)
    session_ingest_evaluated(project, diagnosis_payload("a-2", mode="aiops"))
    today = timezone.localdate()

    board = dashboard_get(date_range=DateRange(today, today), access=Access.to_everything())
    failed = session.self_evaluation[Layer.AIOPS]["failed_checks"]
    assert "evidence_tools_succeeded" in failed
    assert dict(board.aiops_failures) == dict.fromkeys(failed, 1)  # a-2 failed none

    session_ingest(project, diagnosis_payload("a-1", mode="aiops"))
    session_evaluate(session_pk=session.pk)
    assert dashboard_get(date_range=DateRange(today, today), access=Access.to_everything()).aiops_failures == []


def test_the_backfill_makes_the_rows_the_evaluation_would_have_made(project):
    evaluated = [
        session_ingest_evaluated(project, aiops_payload()),
        session_ingest_evaluated(
            project, diagnosis_payload("a-2", mode="aiops", aiops_failure="evidence_tools_succeeded")
        ),
        session_ingest_evaluated(project, chat_payload()),
    ]
    expected = {session.pk: rows(session) for session in evaluated}
    AiOpsCheck.objects.all().delete()  # as before the rows existed
    # An agent's legacy layer with entries that are not checks: skipped, not fatal.
    legacy = session_ingest(project, chat_payload(sessionId="s-legacy"))
    DiagnosisSession.objects.filter(pk=legacy.pk).update(
        self_evaluation={
            Layer.AIOPS: {"verdict": "FAIL", "checks": [1, {"check": "x"}, {"check": "y", "passed": False}]}
        }
    )

    backfill(apps, None)

    assert {session.pk: rows(session) for session in evaluated} == expected
    assert rows(legacy) == {"y": (False, "critical", True, "")}
    backfill(apps, None)  # a second run changes nothing
    assert AiOpsCheck.objects.count() == sum(len(r) for r in expected.values()) + 1
