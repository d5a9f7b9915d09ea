"""Legacy JSON is the agent's history, not a verdict (issue 12, section 2).

Whatever the agent sends as `selfEvaluation`, flat root keys or already-layered values, is kept
as legacy layers, visibly marked, until a producer replaces them. It is validated and bounded at
ingestion, never fills a verdict column, so never counts in the dashboard, the triage queue,
calibration or the verifier's bad cases, and never breaks or blocks an evaluation.
"""

import pytest
from django.urls import reverse

from backoffice.triage import TRIAGE_CHANGELIST
from cases.models import BadCase
from core.tenancy.access import Access
from diagnosis.constants import Layer
from diagnosis.evaluation_layers import ROUND_MAX
from diagnosis.models import ClaimCheck, DiagnosisSession, EvaluationState, EvidenceRef
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services.evaluation import session_evaluate, session_evaluation_request
from diagnosis.services.evaluation_data import session_data_from_models, session_data_from_payload
from reporting.selectors import calibration_get, dashboard_get, date_range_parse
from tests.admin.conftest import logged_in
from tests.factories import aiops_payload, diagnosis_payload, session_ingest, session_ingest_evaluated
from tests.feedback.helpers import post_json

pytestmark = pytest.mark.django_db

CRAFTED = {"verifier_evaluation": {"round": 2147483647, "verdict": "PASS", "groundedness_score": 1.0}}


def _reject_payload(session_id: str = "s-crafted", self_evaluation=CRAFTED):
    """A session the verifier rejects (a changed number), sent with the agent's own PASS."""
    return diagnosis_payload(session_id, verdict="REJECT") | {"selfEvaluation": self_evaluation}


def test_a_layered_verdict_from_the_agent_is_legacy_and_fills_no_column(api, project):
    response = post_json(api, "/api/sessions", _reject_payload())

    assert response.status_code == 201, response.content
    assert response.json()["verifierVerdict"] is None
    session = DiagnosisSession.objects.get()
    assert session.self_evaluation[Layer.VERIFIER]["source"] == "legacy"
    assert (session.verifier_verdict, session.groundedness_score) == ("", None)


def test_the_agent_cannot_pass_its_layer_off_as_a_producers(api, project):
    forged = {Layer.RULE: {"evidence_score": 100, "source": "rule"}, Layer.AIOPS: {"verdict": "PASS"}}

    assert post_json(api, "/api/sessions", _reject_payload(self_evaluation=forged)).status_code == 201

    session = DiagnosisSession.objects.get()
    assert session.self_evaluation[Layer.RULE]["source"] == "legacy"
    assert session.self_evaluation[Layer.AIOPS]["source"] == "legacy"
    assert (session.evidence_score, session.aiops_verdict) == (None, "")


def test_a_crafted_round_neither_breaks_nor_blocks_the_evaluation(project):
    session = session_ingest_evaluated(project, _reject_payload())

    assert session.evaluation_state == EvaluationState.DONE, session.evaluation_error
    verifier = session.self_evaluation[Layer.VERIFIER]
    assert (verifier["verdict"], verifier["round"]) == ("REJECT", 1) and "source" not in verifier
    assert session.verifier_verdict == "REJECT"  # SelfEval's verdict, not the agent's PASS
    assert set(ClaimCheck.objects.filter(session=session).values_list("round", flat=True)) == {1}

    session_evaluation_request(session_pks=[session.pk])  # reevaluate: the same, again
    assert session_evaluate(session_pk=session.pk) == EvaluationState.DONE


def test_a_legacy_layer_no_producer_replaces_stays_marked_through_evaluations(project):
    payload = aiops_payload(selfEvaluation=CRAFTED)  # no executor output: the verifier does not apply
    session = session_ingest_evaluated(project, payload)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()

    assert session.evaluation_state == EvaluationState.DONE, session.evaluation_error
    assert session.self_evaluation[Layer.VERIFIER] == {**CRAFTED[Layer.VERIFIER], "source": "legacy"}
    assert (session.verifier_verdict, session.groundedness_score) == ("", None)


def test_legacy_verdicts_count_in_no_dashboard_queue_calibration_or_bad_case(project, superuser):
    legacy_reject = {Layer.VERIFIER: {"verdict": "REJECT", "groundedness_score": 0.0}}
    legacy_pass = {"verdict": "PASS", "groundedness_score": 1.0}
    rejected = session_ingest(project, aiops_payload(sessionId="a-legacy-reject", selfEvaluation=legacy_reject))
    passed = session_ingest(project, aiops_payload(sessionId="a-legacy-pass", selfEvaluation=legacy_pass))
    for session in (rejected, passed):
        session_evaluate(session_pk=session.pk)
    date_range, _errors = date_range_parse(start=None, end=None)

    dashboard = dashboard_get(date_range=date_range, access=Access.to_everything())
    calibration = calibration_get(date_range=date_range, access=Access.to_everything())

    assert dashboard.verdicts == {"PASS": 0, "LOW_CONFID": 0, "REJECT": 0, "": 2}  # both counted without a verdict
    assert dashboard.needs_review == 0
    assert calibration.cell(verdict="REJECT") == calibration.cell(verdict="PASS") == 0
    assert not DiagnosisSession.objects.filter(needs_review=True).exists()
    queue = logged_in(superuser).get(reverse(TRIAGE_CHANGELIST))
    assert queue.status_code == 200 and "a-legacy-reject" not in queue.content.decode()
    assert not BadCase.objects.exists()


def test_the_trace_shows_the_legacy_layer_marked_and_no_verdict_in_its_views(api, project):
    session = session_ingest_evaluated(project, aiops_payload(selfEvaluation=CRAFTED))

    body = api.get(f"/api/trace/{session.session_id}").json()

    verifier = body["selfEvaluation"]["verifierEvaluation"]
    assert (verifier["source"], verifier["verdict"], verifier["round"]) == ("legacy", "PASS", 2147483647)
    assert body["views"]["evidence"]["verifier"]["verdict"] is None
    assert body["views"]["evidence"]["verifier"]["groundednessScore"] is None


def test_the_inspector_marks_a_legacy_layer(superuser, project):
    session = session_ingest_evaluated(project, aiops_payload(selfEvaluation=CRAFTED))

    html = logged_in(superuser).get(f"/admin/diagnosis/diagnosissession/{session.pk}/change/").content.decode()

    assert "se-legacy" in html and "not SelfEval" in html


@pytest.mark.parametrize(
    ("self_evaluation", "field"),
    [
        ({"verdict": "pass"}, "selfEvaluation.verdict"),
        ({"evidence_score": 400}, "selfEvaluation.evidence_score"),
        ({"groundedness_score": -0.5}, "selfEvaluation.groundedness_score"),
        ({"evidence_score": True}, "selfEvaluation.evidence_score"),
        ({Layer.VERIFIER: {"round": 2**31}}, "selfEvaluation.verifier_evaluation.round"),
        ({Layer.VERIFIER: {"round": -1}}, "selfEvaluation.verifier_evaluation.round"),
        ({Layer.VERIFIER: {"verdict": "MAYBE"}}, "selfEvaluation.verifier_evaluation.verdict"),
        ({Layer.VERIFIER: "PASS"}, "selfEvaluation.verifier_evaluation"),
        ({Layer.RULE: {"evidence_score": 101}}, "selfEvaluation.rule_evaluation.evidence_score"),
        ({Layer.AIOPS: {"checks": [{"check": 1}]}}, "selfEvaluation.aiops_rule_evaluation.checks.0.check"),
    ],
)
def test_legacy_json_is_validated_at_ingestion_naming_the_field(api, project, self_evaluation, field):
    response = post_json(api, "/api/sessions", _reject_payload(self_evaluation=self_evaluation))

    assert response.status_code == 400, response.content
    assert list(response.json()["error"]["fields"]) == [field]
    assert not DiagnosisSession.objects.exists()


def test_unknown_legacy_keys_are_kept_as_the_agent_sent_them(api, project):
    legacy = {"evidence_score": 40, "notes": {"by": "agent"}, Layer.VERIFIER: {"round": 3, "extra": [1]}}

    assert post_json(api, "/api/sessions", _reject_payload(self_evaluation=legacy)).status_code == 201

    stored = DiagnosisSession.objects.get().self_evaluation
    assert stored["notes"] == {"by": "agent"}
    assert stored[Layer.VERIFIER] == {"round": 3, "extra": [1], "source": "legacy"}
    assert stored[Layer.RULE] == {"evidence_score": 40, "source": "legacy"}


def test_a_round_at_the_columns_end_stored_before_this_fix_restarts_the_numbering(project):
    """Before legacy layers were marked, an agent's layered round was stored as the verifier's."""
    session = session_ingest(project, diagnosis_payload("s-stale"))
    DiagnosisSession.objects.filter(pk=session.pk).update(
        self_evaluation={Layer.VERIFIER: {"verdict": "PASS", "round": ROUND_MAX}}
    )

    assert session_evaluate(session_pk=session.pk) == EvaluationState.DONE

    session.refresh_from_db()
    assert session.self_evaluation[Layer.VERIFIER]["round"] == 1


def test_both_converters_agree_on_a_session_with_a_legacy_round(project):
    """The agent's layered round numbers nothing, read from the rows as from the payload."""
    payload = _reject_payload()
    session = session_ingest(project, payload)
    validated = session_ingest_from_body(payload)

    from_db = session_data_from_models(
        session=DiagnosisSession.objects.get(pk=session.pk),
        invocations=list(session.invocations.all()),
        refs=EvidenceRef.objects.filter(session=session),
    )

    assert from_db == session_data_from_payload(data=validated)
    assert from_db.previous_round == 0
