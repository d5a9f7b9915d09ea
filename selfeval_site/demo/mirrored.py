"""Plausible evaluation columns for the raw bulk mode, where no evaluation runs.

The rule layer is the rule producer's own (it only needs the invocations); the verifier and
AIOps verdicts are what the scenario was built to provoke. Good enough to fill an admin with a
million filterable rows; real sessions are always evaluated by the pipeline.
"""

import random
from datetime import datetime, timedelta
from typing import Any

from diagnosis.constants import Layer
from diagnosis.evaluation_layers import (
    AiOpsRuleEvaluation,
    LayerValue,
    VerifierEvaluation,
    self_evaluation_write,
)
from diagnosis.models import EvaluationState, FailureAttribution
from diagnosis.services.evaluation_data import session_data_from_rows
from diagnosis.services.producers.rules import rule_evaluation
from diagnosis.services.rows import SessionRows
from selfeval_site.demo.generator import DemoSession

_VERIFIER = {
    "grounded_l0": "PASS",
    "grounded_l1": "PASS",
    "partial_failure": "PASS",
    "no_hit": "LOW_CONFID",
    "unknown_ref": "LOW_CONFID",
    "ref_from_failed_call": "LOW_CONFID",
    "no_tool_calls": "LOW_CONFID",
    "absence_claim": "REJECT",
    "fabricated_excerpt": "REJECT",
    "altered_number": "REJECT",
    "all_calls_failed": "REJECT",
    "invalid_executor_output": "REJECT",
    # AIOps reports with executor claims (generator.AIOPS_WITH_CLAIMS)
    "aiops_focused": "PASS",
    "aiops_unrelated_alert": "REJECT",
    "aiops_misread_metric": "REJECT",
}
_AIOPS = {
    "aiops_focused": "PASS",
    "aiops_no_evidence_tools": "WARN",
    "aiops_unrelated_alert": "FAIL",
    "aiops_no_report": "FAIL",
    "aiops_failed": "FAIL",
    "aiops_misread_metric": "PASS",
}
_ATTRIBUTION = {
    "no_hit": FailureAttribution.RETRIEVAL_MISS,
    "no_tool_calls": FailureAttribution.RETRIEVAL_MISS,
    "all_calls_failed": FailureAttribution.TOOL_ERROR,
    "ref_from_failed_call": FailureAttribution.TOOL_ERROR,
    "fabricated_excerpt": FailureAttribution.CITATION_FAILURE,
    "unknown_ref": FailureAttribution.CITATION_FAILURE,
    "absence_claim": FailureAttribution.UNSUPPORTED_REASONING,
    "altered_number": FailureAttribution.UNSUPPORTED_REASONING,
    "invalid_executor_output": FailureAttribution.UNSUPPORTED_REASONING,
    "aiops_unrelated_alert": FailureAttribution.UNSUPPORTED_REASONING,
    "aiops_misread_metric": FailureAttribution.UNSUPPORTED_REASONING,
}
_GROUNDEDNESS = {"PASS": (0.8, 1.0), "LOW_CONFID": (0.4, 0.75), "REJECT": (0.0, 0.35)}


def plausible_evaluation(demo: DemoSession, rows: SessionRows, *, now: datetime) -> dict[str, Any]:
    """Session columns (self_evaluation and its mirrors) as if the pipeline had run on `rows`,
    the rows of `demo`."""
    rng = random.Random(f"selfeval-demo-eval:{demo.session_id}")
    payload = demo.payload
    rule = rule_evaluation(session=session_data_from_rows(rows=rows))
    layers: dict[Layer, LayerValue] = {Layer.RULE: rule}
    verdict = aiops = ""
    groundedness = None
    finished = payload["status"] == "SUCCEEDED"
    # The pipeline's rule: the verifier judges chat sessions and any session with executor output.
    if (payload["mode"] == "chat" or payload["executorOutput"] is not None) and finished:
        verdict = _VERIFIER.get(demo.scenario, "")
        legacy = payload.get("selfEvaluation")
        if legacy:
            verdict = legacy["verdict"]
        if verdict:
            low, high = _GROUNDEDNESS[verdict]
            groundedness = round(rng.uniform(low, high), 2)
            layers[Layer.VERIFIER] = VerifierEvaluation(
                verdict=verdict,
                groundedness_score=groundedness,
                round=1,
                traceability_version="v1",
                rationale="demo data (bulk mode): verdict set by the generator, not by a judge",
            )
    if payload["mode"] == "aiops":
        aiops = _AIOPS.get(demo.scenario, "")
        if aiops:
            layers[Layer.AIOPS] = AiOpsRuleEvaluation(verdict=aiops)
    attribution = (
        _ATTRIBUTION.get(demo.scenario, FailureAttribution.NONE) if verdict in {"LOW_CONFID", "REJECT"} else ""
    )
    evaluation = self_evaluation_write({}, layers)
    return {
        "self_evaluation": evaluation.container,
        **evaluation.mirrored_columns(),
        "failure_attribution": attribution or (FailureAttribution.NONE if verdict == "PASS" else ""),
        "feedback": demo.feedback,
        "evaluation_state": EvaluationState.DONE,
        "evaluation_attempts": 1,
        "evaluated_at": min(now, rows.session["created_at"] + timedelta(seconds=rng.randint(5, 120))),
    }
