"""The deterministic judge: the `judge` package's calibrated decision, offline, as a `Judge`.

`judge.decision.claim_decide` aligns the claim's units to the windows of the evidence it cites,
weighs the analysis with the shipped model into P(supported) and P(contradicted), and puts the
claim in a band (see its docstring and judge/data/MODEL_CARD.md). Its reasons (codes with
parameters) become `diagnosis.messages` messages here.
"""

from typing import Any

from diagnosis.constants import ClaimDecider
from diagnosis.messages import Message, message
from judge.decision import claim_decide
from judge.verdicts import Reason

from .base import JudgeInput, Judgement


def message_of(reason: Reason) -> Message:
    """The judge's reason as a `diagnosis.messages` message (nested reasons too)."""
    return message(reason.code, **{key: _param(value) for key, value in reason.params.items()})


def _param(value: Any) -> Any:
    if isinstance(value, Reason):
        return message_of(value)
    return [_param(item) for item in value] if isinstance(value, list | tuple) else value


class DeterministicJudge:
    """Offline, repeatable, every verdict explains itself."""

    name = "deterministic"

    def close(self) -> None:
        """Nothing to release; part of the judge protocol."""

    def judge(self, item: JudgeInput) -> Judgement:
        decision = claim_decide(item.text, item.evidence, sources=item.sources)
        return Judgement(
            decision.verdict.value,
            message_of(decision.rationale),
            self.name,
            p_supported=decision.p_supported,
            p_contradicted=decision.p_contradicted,
            band=decision.band,
            decided_by=ClaimDecider.DETERMINISTIC,
            reasons=tuple(message_of(r) for r in decision.reasons),
        )
