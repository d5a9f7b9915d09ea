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

from .aiops import aiops_rule_evaluation
from .composer import composer_output
from .executor_output import VALID, executor_output_parse
from .facts import extract_facts, service_of
from .gatekeeper import EXCERPT_MISMATCH, REF_FROM_FAILED_CALL, REF_NOT_FOUND, gatekeeper_check, gatekeeper_result
from .judges import NO_EVIDENCE, Judge, judge_get
from .rules import rule_evaluation
from .trace_summary import tool_trace_summary
from .types import ClaimResult, PipelineResult, SessionData
from .verifier import PASS, ClaimOutcome, claim_verify, groundedness, session_verdict, thresholds_from_settings

logger = logging.getLogger(__name__)

RULE_LAYER = "rule_evaluation"
VERIFIER_LAYER = "verifier_evaluation"
AIOPS_LAYER = "aiops_rule_evaluation"
TRACEABILITY_VERSION = "v1"


def evaluation_round(session: SessionData) -> int:
    if session.previous_round <= 0 or session.evidence_fingerprint != session.previous_evidence_fingerprint:
        return session.previous_round + 1
    return session.previous_round


def applicable_layers(session: SessionData) -> tuple[str, ...]:
    """The layers `session` qualifies for, per the module docstring (rule always)."""
    layers = [RULE_LAYER]
    if session.mode == "chat" or session.executor_output is not None:
        layers.append(VERIFIER_LAYER)
    if session.mode == "aiops":
        layers.append(AIOPS_LAYER)
    return tuple(layers)


def evaluate(session: SessionData, *, judge: Judge | None = None) -> PipelineResult:
    """Run every applicable producer over `session`; see the module docstring."""
    applicable = applicable_layers(session)
    result = PipelineResult(
        round=evaluation_round(session),
        inapplicable_layers=tuple(name for name in (RULE_LAYER, VERIFIER_LAYER, AIOPS_LAYER) if name not in applicable),
    )
    try:
        result.layers[RULE_LAYER] = rule_evaluation(session=session)
    except Exception as exc:
        _record(result, "rule", exc)

    outcomes: list[ClaimOutcome] = []
    parse_ok = True
    if VERIFIER_LAYER in applicable:
        try:
            layer, outcomes, parse_ok = _verifier_chain(session, judge or judge_get(), result.round)
            result.layers[VERIFIER_LAYER] = layer
            result.claim_results = [_claim_result(o, session) for o in outcomes]
        except Exception as exc:
            outcomes = []
            _record(result, "verifier", exc)

    if AIOPS_LAYER in applicable:
        try:
            result.layers[AIOPS_LAYER] = aiops_rule_evaluation(session=session)
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


def _verifier_chain(session: SessionData, judge: Judge, round_: int) -> tuple[dict[str, Any], list[ClaimOutcome], bool]:
    parsed = executor_output_parse(raw=session.executor_output)
    bindings = gatekeeper_check(claims=parsed.claims, invocations=session.invocations)
    by_claim: dict[str, list] = {}
    for binding in bindings:
        by_claim.setdefault(binding.claim_id, []).append(binding)
    outcomes = [
        claim_verify(claim=c, bindings=by_claim.get(c.claim_id, []), judge=judge, language=session.language)
        for c in parsed.claims
    ]
    thresholds = thresholds_from_settings()
    verdict, rationale = session_verdict(outcomes=outcomes, thresholds=thresholds)
    parse_status = parsed.status_dict()
    if parsed.status != VALID:
        rationale = f"{rationale}: executor output {parsed.status} ({'; '.join(parsed.errors)})"
    cited: dict[str, list[str]] = {}
    for binding in bindings:
        cited.setdefault(binding.ref_id, []).append(binding.claim_id)
    used_tools = list(dict.fromkeys(inv.tool_name for inv in session.invocations))
    facts = [fact for o in outcomes for fact in o.facts]
    fallbacks = [o.claim.claim_id for o in outcomes if o.fallback_reason]
    llm_claims = [o.claim.claim_id for o in outcomes if o.judge.startswith("llm:") or o.fallback_reason]
    layer = {
        "verdict": verdict,
        "groundedness_score": groundedness(outcomes),
        "critical_fact_count": sum(1 for f in facts if f["critical"]),
        "claim_checks": [
            {
                "claimId": o.claim.claim_id,
                "text": o.claim.text,
                "critical": o.claim.critical,
                "verdict": o.verdict,
                "rationale": o.rationale,
                "judge": o.judge,
                "escalated": o.escalated,
                "absence_claim": o.absence,
                "refIds": list(o.verified_ref_ids),
                "bindings": [b.status for b in o.bindings],
            }
            for o in outcomes
        ],
        "facts_checked": facts,
        "rationale": rationale,
        "round": round_,
        "traceability_version": TRACEABILITY_VERSION,
        "executor_output_parse_status": parse_status,
        "executor_structured_output": parsed.structured_output() if parsed.status == VALID else session.executor_output,
        "gatekeeper_result": gatekeeper_result(bindings=bindings),
        "composer_output": composer_output(
            verdict=verdict,
            outcomes=outcomes,
            language=session.language,
            parse_status=parse_status,
            used_tools=used_tools,
        ),
        "tool_trace_summary": tool_trace_summary(invocations=session.invocations, cited=cited),
        "evidence_fingerprint": session.evidence_fingerprint,
        "judge": {
            "name": getattr(judge, "name", type(judge).__name__),
            "fallback_claims": fallbacks,
            # Claims the LLM was asked about (the cascade's escalations included) and how many.
            "llm_claims": llm_claims,
            "llm_count": len(llm_claims),
            "escalated_claims": [o.claim.claim_id for o in outcomes if o.escalated],
        },
        "thresholds": thresholds,
    }
    return layer, outcomes, parsed.status == VALID


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
        rationale=outcome.rationale,
        facts=outcome.facts,
        bindings=[b.as_dict() for b in outcome.bindings],
        service=claim_service(outcome.claim.text, session.alert),
        ref_ids=outcome.verified_ref_ids,
    )


def failure_attribution(
    session: SessionData, layers: dict[str, dict[str, Any]], outcomes: list[ClaimOutcome], parse_ok: bool
) -> str:
    """See the module docstring for the precedence."""
    verifier = layers.get(VERIFIER_LAYER)
    aiops = layers.get(AIOPS_LAYER)
    wrong = (verifier is not None and verifier.get("verdict") != PASS) or (
        aiops is not None and aiops.get("verdict") != "PASS"
    )
    if not wrong:
        return "NONE"
    invocations = session.invocations
    statuses = {b.status for o in outcomes for b in o.bindings}
    failed_categories = [
        c["check"]
        for c in (aiops or {}).get("checks", [])
        if c["check"].startswith("evidence_") and not c["passed"] and c.get("reason", "").startswith("all ")
    ]
    if (
        (invocations and all(inv.status != "SUCCESS" for inv in invocations))
        or REF_FROM_FAILED_CALL in statuses
        or failed_categories
    ):
        return "TOOL_ERROR"
    retrieval = [inv for inv in invocations if inv.is_retrieval]
    if (retrieval and not any(inv.match_level in {"L0", "L1"} for inv in retrieval)) or any(
        o.verdict == NO_EVIDENCE for o in outcomes
    ):
        return "RETRIEVAL_MISS"
    if verifier is not None and (
        not parse_ok or statuses & {REF_NOT_FOUND, EXCERPT_MISMATCH} or any(not o.bindings for o in outcomes)
    ):
        return "CITATION_FAILURE"
    return "UNSUPPORTED_REASONING"
