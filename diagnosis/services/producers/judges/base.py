"""What every judge takes and gives: the claim with its verified evidence, and a verdict that says why."""

from dataclasses import dataclass
from typing import Any, Protocol

from diagnosis.constants import ClaimBand, ClaimDecider, ClaimVerdict
from diagnosis.messages import Message
from judge.facts import EvidenceText

SUPPORTED = ClaimVerdict.SUPPORTED
UNSUPPORTED = ClaimVerdict.UNSUPPORTED
CONTRADICTED = ClaimVerdict.CONTRADICTED
NO_EVIDENCE = ClaimVerdict.NO_EVIDENCE
JUDGE_VERDICTS = (SUPPORTED, UNSUPPORTED, CONTRADICTED)
MAX_REASONS = 3  # reasons stored per claim


def band_of(verdict: str) -> ClaimBand:
    """The band a verdict stands for when no scores drew the bands (the LLM judge, the rules)."""
    return {SUPPORTED: ClaimBand.SUPPORTED, CONTRADICTED: ClaimBand.CONTRADICTED}.get(verdict, ClaimBand.UNSUPPORTED)


@dataclass(frozen=True, slots=True)
class JudgeInput:
    claim_id: str
    text: str
    critical: bool
    evidence: tuple[str, ...]  # verified excerpts in their sentence context
    evidence_text: EvidenceText  # the same, joined and prepared
    facts: tuple[dict[str, Any], ...]  # fact checks (kind, value, status, ...)
    language: str = "en"
    sources: str = ""  # compact text of the cited refs and their sources: names the subject


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: str  # SUPPORTED | UNSUPPORTED | CONTRADICTED
    message: Message  # why, as a `diagnosis.messages` code with its parameters
    judge: str
    fallback_reason: str = ""
    cached: bool = False
    escalated: bool = False  # the cascade sent this claim to the LLM judge
    p_supported: float | None = None  # calibrated, when a model scored the claim
    p_contradicted: float | None = None
    band: ClaimBand | None = None  # None: the band of the verdict (the cascade escalates UNDECIDED)
    decided_by: ClaimDecider = ClaimDecider.DETERMINISTIC
    reasons: tuple[Message, ...] = ()  # the strongest first, at most MAX_REASONS

    @property
    def claim_band(self) -> ClaimBand:
        return self.band or band_of(self.verdict)

    @property
    def rationale(self) -> str:
        return self.message.text


class Judge(Protocol):
    name: str

    def judge(self, item: JudgeInput) -> Judgement: ...

    def close(self) -> None: ...
