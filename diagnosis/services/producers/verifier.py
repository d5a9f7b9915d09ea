"""Verifier: per-claim verdicts over gatekeeper-verified evidence, and the session verdict.

Per claim, in order (code guards first, the judge only for what is left):
- no evidence binding at all -> UNSUPPORTED;
- bound only to `$.no_evidence` -> NO_EVIDENCE. This holds for absence claims too ("ruled out",
  "confirmed none", "no ... found", "已排除", "确认没有", "不存在", "排除了"): retrieving nothing
  never proves that something does not exist;
- no binding VERIFIED by the gatekeeper -> UNSUPPORTED;
- otherwise the judge decides over the verified excerpts in their sentence context (a changed
  number, code or name is a located conflict the judge finds in its slot, not a document-wide
  guess). `facts_checked` still reports, per fact, whether the evidence states it anywhere.

Session verdict. Thresholds come from `EvaluationConfig.thresholds` (`SELFEVAL_VERIFIER_THRESHOLDS`):
- groundedness_score = supported weight / total weight, a critical claim weighing 2 and any other
  claim 1 (null when no claim was judged);
- REJECT when a critical claim is CONTRADICTED or groundedness < `reject_groundedness` (0.4);
- PASS when groundedness >= `pass_groundedness` (0.8), every critical claim is SUPPORTED and no
  claim is CONTRADICTED;
- LOW_CONFID otherwise, and whenever no claim could be judged (executor output missing, invalid
  or without claims): unverifiable is not proven wrong, but it is not a pass either.
critical_fact_count is the number of facts extracted from critical claims.
"""

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from core.text import compact
from diagnosis.constants import ClaimBand, ClaimDecider, VerifierVerdict
from diagnosis.messages import Message, message
from judge.facts import evidence_text, extract_facts, fact_check

from .config import VerifierThresholds
from .executor_output import Claim
from .gatekeeper import NO_EVIDENCE as GATE_NO_EVIDENCE
from .gatekeeper import VERIFIED, CheckedBinding
from .judges import CONTRADICTED, NO_EVIDENCE, SUPPORTED, UNSUPPORTED, Judge, JudgeInput
from .judges.base import band_of

logger = logging.getLogger(__name__)

_ABSENCE = re.compile(
    r"ruled out|rules? out|excluded|eliminated|confirmed (?:that )?(?:there (?:is|are|was|were) )?(?:no|none)\b"
    r"|\bno\b[^.;,]{0,60}\b(?:found|detected|observed|seen|present)\b|\bnot (?:found|detected|observed|present)\b"
    r"|\bnone (?:found|detected)\b|\bdoes(?: not|n't) exist|\bno evidence of\b|\bthere (?:is|are|was|were) no\b"
    r"|已排除|排除了|可以排除|确认没有|确认无|不存在|未发现|没有发现|并无|未见|无异常|没有异常",
    re.IGNORECASE,
)


def is_absence_claim(text: str) -> bool:
    return bool(_ABSENCE.search(text or ""))


@dataclass(frozen=True, slots=True)
class ClaimOutcome:
    claim: Claim
    verdict: str
    message: Message  # the rationale, as a `diagnosis.messages` code with its parameters
    judge: str
    facts: list[dict[str, Any]]
    bindings: list[CheckedBinding]
    absence: bool
    fallback_reason: str = ""
    escalated: bool = False  # the cascade asked the LLM judge
    p_supported: float | None = None
    p_contradicted: float | None = None
    band: ClaimBand | None = None  # None when no judge decided (the rules before it)
    decided_by: ClaimDecider = ClaimDecider.RULE
    reasons: tuple[Message, ...] = field(default=())

    @property
    def rationale(self) -> str:
        return self.message.text

    @property
    def verified_ref_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b.ref_id for b in self.bindings if b.status == VERIFIED))


def claim_verify(*, claim: Claim, bindings: list[CheckedBinding], judge: Judge, language: str) -> ClaimOutcome:
    """The claim's outcome; never raises: a failure while analysing or judging this claim makes it
    UNSUPPORTED with the `judge.error` reason (the exception logged), and the session's other
    claims and its layer stay."""
    try:
        return _claim_verify(claim=claim, bindings=bindings, judge=judge, language=language)
    except Exception as exc:
        logger.exception("judging claim %s failed", claim.claim_id)
        why = message("judge.error", error=f"{type(exc).__name__}: {exc}"[:200])
        return ClaimOutcome(
            claim, UNSUPPORTED, why, getattr(judge, "name", "judge"), [], bindings, is_absence_claim(claim.text),
            band=ClaimBand.UNSUPPORTED, decided_by=ClaimDecider.DETERMINISTIC, reasons=(why,),
        )  # fmt: skip


def _claim_verify(*, claim: Claim, bindings: list[CheckedBinding], judge: Judge, language: str) -> ClaimOutcome:
    absence = is_absence_claim(claim.text)
    verified = [b for b in bindings if b.status == VERIFIED]
    context = "\n".join(b.context for b in verified)
    evidence = evidence_text(context)
    # A name (service, pod, host) counts as stated when the cited ref names it anywhere, or its
    # source does (loki://order-service): the excerpt's sentence rarely repeats the subject.
    sources = "".join(dict.fromkeys(b.ref_compact for b in verified))
    facts: list[dict[str, Any]] = []
    for fact in extract_facts(claim.text):
        status, values = fact_check(fact, evidence) if verified else ("ABSENT", [])
        if status == "ABSENT" and fact.kind == "identifier" and verified and compact(fact.value) in sources:
            status = "STATED"  # the cited ref or its source names it
        facts.append(
            {
                **fact.as_dict(),
                "claimId": claim.claim_id,
                "critical": claim.critical,
                "status": status,
                "stated": status == "STATED",
                "evidence_values": values,
            }
        )

    def outcome(verdict: str, rationale: Message) -> ClaimOutcome:
        band = None if verdict == NO_EVIDENCE else band_of(verdict)
        return ClaimOutcome(
            claim, verdict, rationale, "rule", facts, bindings, absence, band=band, reasons=(rationale,)
        )

    if not bindings:
        return outcome(UNSUPPORTED, message("claim.no_binding"))
    if not verified and all(b.status == GATE_NO_EVIDENCE for b in bindings):
        return outcome(NO_EVIDENCE, message("claim.absence_no_evidence" if absence else "claim.no_evidence"))
    if not verified:
        statuses = sorted({b.status for b in bindings})
        return outcome(UNSUPPORTED, message("claim.gatekeeper_failed", statuses=statuses))
    item = JudgeInput(
        claim_id=claim.claim_id,
        text=claim.text,
        critical=claim.critical,
        evidence=tuple(b.context for b in verified),
        evidence_text=evidence,
        facts=tuple(facts),
        language=language,
        sources=sources,
    )
    judgement = judge.judge(item)
    return ClaimOutcome(
        claim, judgement.verdict, judgement.message, judgement.judge, facts, bindings, absence,
        judgement.fallback_reason, judgement.escalated, judgement.p_supported, judgement.p_contradicted,
        judgement.claim_band, judgement.decided_by, judgement.reasons,
    )  # fmt: skip


def groundedness(outcomes: list[ClaimOutcome]) -> float | None:
    if not outcomes:
        return None
    total = sum(2 if o.claim.critical else 1 for o in outcomes)
    supported = sum(2 if o.claim.critical else 1 for o in outcomes if o.verdict == SUPPORTED)
    return round(supported / total, 3)


def session_verdict(*, outcomes: list[ClaimOutcome], thresholds: VerifierThresholds) -> tuple[VerifierVerdict, Message]:
    """(verdict, rationale) per the thresholds in the module docstring."""
    score = groundedness(outcomes)
    if score is None:
        return VerifierVerdict.LOW_CONFID, message("verifier.no_claims")
    summary = {"supported": sum(1 for o in outcomes if o.verdict == SUPPORTED), "total": len(outcomes)}
    summary["groundedness"] = score
    critical_contradicted = [o.claim.claim_id for o in outcomes if o.claim.critical and o.verdict == CONTRADICTED]
    if critical_contradicted:
        return VerifierVerdict.REJECT, message(
            "verifier.critical_contradicted", **summary, claims=critical_contradicted
        )
    if score < thresholds.reject_groundedness:
        return VerifierVerdict.REJECT, message(
            "verifier.below_reject", **summary, threshold=thresholds.reject_groundedness
        )
    weak = [
        o.claim.claim_id for o in outcomes if (o.claim.critical and o.verdict != SUPPORTED) or o.verdict == CONTRADICTED
    ]
    if score >= thresholds.pass_groundedness and not weak:
        return VerifierVerdict.PASS, message("verifier.summary", **summary)
    below = score < thresholds.pass_groundedness
    if weak and below:
        return VerifierVerdict.LOW_CONFID, message(
            "verifier.needs_evidence_below_pass", **summary, claims=weak, threshold=thresholds.pass_groundedness
        )
    if weak:
        return VerifierVerdict.LOW_CONFID, message("verifier.needs_evidence", **summary, claims=weak)
    return VerifierVerdict.LOW_CONFID, message("verifier.below_pass", **summary, threshold=thresholds.pass_groundedness)
