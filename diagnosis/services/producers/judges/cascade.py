"""Cascade: the deterministic judge first; the LLM judge only for the claims it left undecided."""

from dataclasses import replace

from diagnosis.constants import ClaimBand
from diagnosis.messages import message

from .base import Judge, JudgeInput, Judgement


class CascadeJudge:
    """`first` decides; a claim whose calibrated scores fall in the undecided band (between the
    UNSUPPORTED and the SUPPORTED thresholds) goes to `second`. Clear verdicts, located conflicts
    included, never do. The rationale of an escalated claim keeps both judges' words, and its
    stored scores and band stay the first judge's: they are why it was escalated."""

    name = "cascade"

    def __init__(self, *, first: Judge, second: Judge) -> None:
        self.first = first
        self.second = second

    def close(self) -> None:
        self.first.close()
        self.second.close()

    def judge(self, item: JudgeInput) -> Judgement:
        first = self.first.judge(item)
        if first.claim_band != ClaimBand.UNDECIDED:
            return first
        second = self.second.judge(item)
        return replace(
            second,
            message=message("judge.escalated", rationale=second.message, judge=first.judge, first=first.message),
            escalated=True,
            p_supported=first.p_supported,
            p_contradicted=first.p_contradicted,
            band=first.claim_band,
        )
