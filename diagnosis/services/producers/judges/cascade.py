"""Cascade: the deterministic judge first; the LLM judge only for what it could not align."""

from dataclasses import replace

from diagnosis.messages import message

from .base import UNALIGNED, UNSUPPORTED, Judge, JudgeInput, Judgement


class CascadeJudge:
    """`first` decides; a claim it leaves UNSUPPORTED because some unit did not align goes to
    `second`. Located conflicts, hedged or failed-search evidence and supported claims never do.
    The rationale of an escalated claim keeps both judges' words."""

    name = "cascade"

    def __init__(self, *, first: Judge, second: Judge) -> None:
        self.first = first
        self.second = second

    def close(self) -> None:
        self.first.close()
        self.second.close()

    def judge(self, item: JudgeInput) -> Judgement:
        first = self.first.judge(item)
        if first.verdict != UNSUPPORTED or first.basis != UNALIGNED:
            return first
        second = self.second.judge(item)
        return replace(
            second,
            message=message("judge.escalated", rationale=second.message, judge=first.judge, first=first.message),
            escalated=True,
            # The first judge's scores and band stay: they are why the claim was escalated.
            p_supported=first.p_supported,
            p_contradicted=first.p_contradicted,
            band=first.claim_band,
        )
