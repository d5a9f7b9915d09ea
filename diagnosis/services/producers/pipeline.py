"""The pure evaluation pipeline: `evaluate(session) -> PipelineResult`, no ORM, no writes.

Producers that apply:
- rule evaluation: always;
- verifier chain (executor output parse -> gatekeeper -> verifier -> composer, plus the tool
  trace summary): mode "chat", or any session carrying executor output (AIOps reports with
  structured claims are judged claim by claim too);
- AIOps rule evaluation: mode "aiops".
Layers that no longer apply (a session re-posted in another mode, or without its executor
output in AIOps mode) are listed in `PipelineResult.inapplicable_layers`, for removal.
Each producer runs in its own try/except: one that raises leaves the others' layers, and its
error is recorded under its name in `PipelineResult.errors` ("rule", "verifier", "aiops").

Round: previous_round + 1 when there was no previous round or the evidence fingerprint changed,
else previous_round, so evaluating the same evidence twice is idempotent.

Failure attribution, when something is wrong (verifier verdict not PASS or AIOps verdict not
PASS); the first that applies wins, earliest stage of the chain first:
1. TOOL_ERROR: every call failed, a claim cites a failed call, or an evidence category was
   called and every call of it failed;
2. RETRIEVAL_MISS: retrieval calls exist and none hit, or a claim is NO_EVIDENCE;
3. CITATION_FAILURE: a binding is REF_NOT_FOUND or EXCERPT_MISMATCH, a claim cites nothing, or
   the executor output is missing or invalid;
4. UNSUPPORTED_REASONING: anything else (the evidence was real but does not carry the claims,
   or the AIOps report is about the wrong object).
NONE when nothing is wrong.
"""

import logging
from typing import Any

import msgspec

from diagnosis.constants import AiOpsVerdict, ClaimVerdict, FailureAttribution, Layer, Mode, VerifierVerdict
from diagnosis.evaluation_layers import (
    ClaimCheckEntry,
    FactCheck,
    JudgeReason,
    JudgeSummary,
    LayerValue,
    VerifierEvaluation,
)
from diagnosis.messages import message
from judge.facts import extract_facts, service_of

from .aiops import aiops_rule_evaluation
from .composer import composer_output
from .config import EvaluationConfig
from .executor_output import VALID, executor_output_parse
from .gatekeeper import EXCERPT_MISMATCH, REF_FROM_FAILED_CALL, REF_NOT_FOUND, gatekeeper_check, gatekeeper_result
from .judges import Judge
from .rules import rule_evaluation
from .trace_summary import tool_trace_summary
from .types import ClaimResult, PipelineResult, SessionData
from .verifier import ClaimOutcome, claim_verify, groundedness, session_verdict

logger = logging.getLogger(__name__)

TRACEABILITY_VERSION = "v1"


def evaluation_round(session: SessionData) -> int:
    if session.previous_round <= 0 or session.evidence_fingerprint != session.previous_evidence_fingerprint:
        return session.previous_round + 1
    return session.previous_round


def applicable_layers(*, mode: str, has_executor_output: bool) -> tuple[Layer, ...]:
    """The layers a session qualifies for, per the module docstring (rule always)."""
    layers = [Layer.RULE]
    if mode == Mode.CHAT or has_executor_output:
        layers.append(Layer.VERIFIER)
    if mode == Mode.AIOPS:
        layers.append(Layer.AIOPS)
    return tuple(layers)


def evaluate(session: SessionData, *, config: EvaluationConfig, judge: Judge) -> PipelineResult:
    """Run every applicable producer over `session`; see the module docstring."""
    applicable = applicable_layers(mode=session.mode, has_executor_output=session.executor_output is not None)
    result = PipelineResult(
        round=evaluation_round(session),
        inapplicable_layers=tuple(name for name in Layer if name not in applicable),
    )
    try:
        result.layers[Layer.RULE] = rule_evaluation(session=session)
    except Exception as exc:
        _record(result, "rule", exc)

    outcomes: list[ClaimOutcome] = []
    parse_ok = True
    if Layer.VERIFIER in applicable:
        try:
            layer, outcomes, parse_ok = _verifier_chain(session, config, judge, result.round)
            result.layers[Layer.VERIFIER] = layer
            result.claim_results = [_claim_result(o, session) for o in outcomes]
        except Exception as exc:
            outcomes = []
            _record(result, "verifier", exc)

    if Layer.AIOPS in applicable:
        try:
            result.layers[Layer.AIOPS] = aiops_rule_evaluation(session=session, tool_categories=config.tool_categories)
        except Exception as exc:
            _record(result, "aiops", exc)

    try:
        result.failure_attribution = failure_attribution(session, result.layers, outcomes, parse_ok)
    except Exception as exc:
        _record(result, "attribution", exc)
    return result


def _record(result: PipelineResult, producer: str, exc: Exception) -> None:
    logger.exception("producer %s failed", producer)
    result.errors[producer] = f"{type(exc).__name__}: {exc}"[:500]


def _verifier_chain(
    session: SessionData, config: EvaluationConfig, judge: Judge, round_: int
) -> tuple[VerifierEvaluation, list[ClaimOutcome], bool]:
    parsed = executor_output_parse(raw=session.executor_output)
    bindings = gatekeeper_check(claims=parsed.claims, invocations=session.invocations)
    by_claim: dict[str, list] = {}
    for binding in bindings:
        by_claim.setdefault(binding.claim_id, []).append(binding)
    outcomes = [
        claim_verify(claim=c, bindings=by_claim.get(c.claim_id, []), judge=judge, language=session.language)
        for c in parsed.claims
    ]
    verdict, rationale = session_verdict(outcomes=outcomes, thresholds=config.thresholds)
    parse_status = parsed.parse_status()
    if parsed.status != VALID:
        rationale = message(
            "verifier.executor_output_unreadable",
            rationale=rationale,
            status=parsed.status,
            errors="; ".join(parsed.errors),
        )
    cited: dict[str, list[str]] = {}
    for binding in bindings:
        cited.setdefault(binding.ref_id, []).append(binding.claim_id)
    used_tools = list(dict.fromkeys(inv.tool_name for inv in session.invocations))
    facts = [fact for o in outcomes for fact in _facts(o)]
    fallbacks = [o.claim.claim_id for o in outcomes if o.fallback_reason]
    llm_claims = [o.claim.claim_id for o in outcomes if o.judge.startswith("llm:") or o.fallback_reason]
    layer = VerifierEvaluation(
        verdict=verdict,
        groundedness_score=groundedness(outcomes),
        critical_fact_count=sum(1 for f in facts if f.critical),
        claim_checks=[
            ClaimCheckEntry(
                claim_id=o.claim.claim_id,
                text=o.claim.text,
                critical=o.claim.critical,
                verdict=ClaimVerdict(o.verdict),
                **o.message.fields("rationale"),
                judge=o.judge,
                **_decision(o),
                escalated=o.escalated,
                absence_claim=o.absence,
                ref_ids=list(o.verified_ref_ids),
                bindings=[b.status for b in o.bindings],
            )
            for o in outcomes
        ],
        facts_checked=facts,
        **rationale.fields("rationale"),
        round=round_,
        traceability_version=TRACEABILITY_VERSION,
        executor_output_parse_status=parse_status,
        executor_structured_output=parsed.structured_output() if parsed.status == VALID else session.executor_output,
        gatekeeper_result=gatekeeper_result(bindings=bindings),
        composer_output=composer_output(
            verdict=verdict,
            outcomes=outcomes,
            language=session.language,
            parse_status=parse_status,
            used_tools=used_tools,
            tool_categories=config.tool_categories,
        ),
        tool_trace_summary=tool_trace_summary(invocations=session.invocations, cited=cited),
        evidence_fingerprint=session.evidence_fingerprint,
        judge=JudgeSummary(
            name=judge.name,
            fallback_claims=fallbacks,
            llm_claims=llm_claims,
            llm_count=len(llm_claims),
            escalated_claims=[o.claim.claim_id for o in outcomes if o.escalated],
        ),
        thresholds=config.thresholds,
    )
    return layer, outcomes, parsed.status == VALID


def _decision(outcome: ClaimOutcome) -> dict[str, Any]:
    """The judge's decision of one claim as stored (layer entry and `ClaimCheck` row alike)."""
    return {
        "p_supported": _probability(outcome.p_supported),
        "p_contradicted": _probability(outcome.p_contradicted),
        "band": outcome.band,
        "decided_by": outcome.decided_by,
        "reasons": [JudgeReason(code=m.code, params=m.json(), text=m.text) for m in outcome.reasons],
    }


def _probability(value: float | None) -> float | None:
    return None if value is None else round(min(1.0, max(0.0, value)), 4)


def _facts(outcome: ClaimOutcome) -> list[FactCheck]:
    """The verifier's fact checks of one claim, typed (they are plain dicts for the judges)."""
    return msgspec.convert(outcome.facts, list[FactCheck])


def claim_service(text: str, alert: dict[str, Any] | None) -> str:
    """The first service-like name in the claim, else the input alert's service, else ""."""
    for fact in extract_facts(text):
        service = service_of(fact)
        if service:
            return service[:200]
    return str((alert or {}).get("service") or "")[:200]


def _claim_result(outcome: ClaimOutcome, session: SessionData) -> ClaimResult:
    return ClaimResult(
        claim_id=outcome.claim.claim_id,
        text=outcome.claim.text,
        critical=outcome.claim.critical,
        verdict=outcome.verdict,
        judge=outcome.judge[:64],
        message=outcome.message,
        facts=_facts(outcome),
        bindings=[b.entry() for b in outcome.bindings],
        service=claim_service(outcome.claim.text, session.alert),
        ref_ids=outcome.verified_ref_ids,
        **_decision(outcome),
    )


def failure_attribution(
    session: SessionData, layers: dict[Layer, LayerValue], outcomes: list[ClaimOutcome], parse_ok: bool
) -> FailureAttribution:
    """See the module docstring for the precedence."""
    verifier = layers.get(Layer.VERIFIER)
    aiops = layers.get(Layer.AIOPS)
    wrong = (verifier is not None and verifier.verdict != VerifierVerdict.PASS) or (
        aiops is not None and aiops.verdict != AiOpsVerdict.PASS
    )
    if not wrong:
        return FailureAttribution.NONE
    invocations = session.invocations
    statuses = {b.status for o in outcomes for b in o.bindings}
    failed_categories = [
        c.check
        for c in (aiops.checks if aiops else [])
        if c.check.startswith("evidence_") and not c.passed and c.reason_code == "aiops.category_all_failed"
    ]
    if (
        (invocations and all(inv.status != "SUCCESS" for inv in invocations))
        or REF_FROM_FAILED_CALL in statuses
        or failed_categories
    ):
        return FailureAttribution.TOOL_ERROR
    retrieval = [inv for inv in invocations if inv.is_retrieval]
    if (retrieval and not any(inv.match_level in {"L0", "L1"} for inv in retrieval)) or any(
        o.verdict == ClaimVerdict.NO_EVIDENCE for o in outcomes
    ):
        return FailureAttribution.RETRIEVAL_MISS
    if verifier is not None and (
        not parse_ok or statuses & {REF_NOT_FOUND, EXCERPT_MISMATCH} or any(not o.bindings for o in outcomes)
    ):
        return FailureAttribution.CITATION_FAILURE
    return FailureAttribution.UNSUPPORTED_REASONING
