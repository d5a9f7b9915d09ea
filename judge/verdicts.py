"""The judge's vocabulary: verdicts, bands, who decided, and reasons (codes with parameters)."""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"
    CONTRADICTED = "CONTRADICTED"


class Band(StrEnum):
    """Where a claim's calibrated scores fall: the verdict, with the undecided band kept apart."""

    SUPPORTED = "supported"
    UNDECIDED = "undecided"  # between the thresholds: UNSUPPORTED, unless a second judge decides
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"

    @property
    def verdict(self) -> Verdict:
        return {Band.SUPPORTED: Verdict.SUPPORTED, Band.CONTRADICTED: Verdict.CONTRADICTED}.get(
            self, Verdict.UNSUPPORTED
        )


class Decider(StrEnum):
    """Which judge decided a claim."""

    RULE = "rule"  # the verifier's guards, before any judge (no binding, nothing verified, $.no_evidence)
    DETERMINISTIC = "deterministic"
    LLM = "llm"


@dataclass(frozen=True, slots=True)
class Reason:
    """Why: a code of `diagnosis.messages` (the "judge." and "unit." codes) with its parameters.
    A parameter may itself be a Reason."""

    code: str
    params: dict[str, Any] = field(default_factory=dict)
    weight: float = 0.0  # how much it moved the decision, for choosing the strongest


def reason(code: str, **params: Any) -> Reason:
    return Reason(code, params)


class UnitStatus(StrEnum):
    """What the checks found for one unit of the claim."""

    ALIGNED = "aligned"
    UNALIGNED = "unaligned"  # no counterpart in the evidence
    STRUCTURE = "structure"  # aligned, but the evidence hedges, says less, or says it of something else
    CONFLICT = "conflict"  # a located conflict: another value, direction, negation, antonym, roles
