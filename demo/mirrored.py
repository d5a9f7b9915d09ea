"""Plausible evaluation columns for the raw bulk mode, where no evaluation runs.

The rule layer is the rule producer's own (it only needs the invocations); the verifier and
AIOps verdicts and the failure attribution are what the pipeline gives the scenario
(`generator.Scenario`, held to it by a test), the groundedness a draw in its verdict's range.
Good enough to fill an admin with a million filterable rows; real sessions are always
evaluated by the pipeline.
"""

import random
from datetime import datetime, timedelta
from typing import Any

from demo.generator import SCENARIO_BY_NAME, DemoSession
from diagnosis.constants import Layer
from diagnosis.evaluation_layers import (
    AiOpsRuleEvaluation,
    LayerValue,
    VerifierEvaluation,
    self_evaluation_write,
)
from diagnosis.messages import message
from diagnosis.models import EvaluationState
from diagnosis.services.evaluation_data import session_data_from_rows
from diagnosis.services.producers.rules import rule_evaluation
from diagnosis.services.rows import SessionRows

_GROUNDEDNESS = {"PASS": (0.8, 1.0), "LOW_CONFID": (0.4, 0.75), "REJECT": (0.0, 0.35)}


def plausible_evaluation(demo: DemoSession, rows: SessionRows, *, now: datetime) -> dict[str, Any]:
    """Session columns (self_evaluation and its mirrors) as if the pipeline had run on `rows`,
    the rows of `demo`."""
    rng = random.Random(f"selfeval-demo-eval:{demo.session_id}")
    scenario = SCENARIO_BY_NAME[demo.scenario]
    layers: dict[Layer, LayerValue] = {Layer.RULE: rule_evaluation(session=session_data_from_rows(rows=rows))}
    if scenario.verdict:
        low, high = _GROUNDEDNESS[scenario.verdict]
        layers[Layer.VERIFIER] = VerifierEvaluation(
            verdict=scenario.verdict,
            groundedness_score=round(rng.uniform(low, high), 2),
            round=1,
            traceability_version="v1",
            **message("demo.bulk_verdict").fields("rationale"),
        )
    if scenario.aiops_verdict:
        layers[Layer.AIOPS] = AiOpsRuleEvaluation(verdict=scenario.aiops_verdict)
    evaluation = self_evaluation_write({}, layers)
    return {
        "self_evaluation": evaluation.container,
        **evaluation.mirrored_columns(),
        "failure_attribution": scenario.attribution,
        "feedback": demo.feedback,
        "evaluation_state": EvaluationState.DONE,
        "evaluation_attempts": 1,
        "evaluated_at": min(now, rows.session["created_at"] + timedelta(seconds=rng.randint(5, 120))),
    }
