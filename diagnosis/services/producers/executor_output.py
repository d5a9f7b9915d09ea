"""Parsing the executor's structured output (`executor_evidence_v2`) into claims.

Status: VALID (claims are judged), MISSING (no structured output at all) or INVALID (the
errors list every problem, by JSON path). Parsing is strict: one malformed claim makes the
whole output INVALID, because a partly-read output would silently drop claims.

Fallback when MISSING or INVALID (recorded in `fallback`): no claim is judged, the verifier
verdict is LOW_CONFID (unverifiable, not proven wrong), groundedness is null, and the composer
states that the answer could not be checked. `finalAnswer` is never parsed for facts: it is
debug context only, whether the output is valid or not.
"""

from dataclasses import dataclass, field
from typing import Any

from diagnosis.constants import VerifierVerdict
from diagnosis.evaluation_layers import ParseFallback, ParseStatus

EXECUTOR_OUTPUT_VERSION = "executor_evidence_v2"

VALID = "VALID"
INVALID = "INVALID"
MISSING = "MISSING"


@dataclass(frozen=True, slots=True)
class Binding:
    ref_id: str
    excerpt: str


@dataclass(frozen=True, slots=True)
class Claim:
    claim_id: str
    text: str
    critical: bool
    evidence: tuple[Binding, ...]


@dataclass(slots=True)
class ParsedOutput:
    status: str
    errors: list[str] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)

    @property
    def fallback(self) -> ParseFallback | None:
        if self.status == VALID:
            return None
        return ParseFallback(
            strategy="no_claims_judged",
            verdict=VerifierVerdict.LOW_CONFID,
            reason="structured executor output missing"
            if self.status == MISSING
            else "structured executor output invalid",
            used=["tool_trace_summary", "rule_evaluation"],
            final_answer_used=False,
        )

    def parse_status(self) -> ParseStatus:
        return ParseStatus(status=self.status, errors=list(self.errors), fallback=self.fallback)

    def structured_output(self) -> dict[str, Any]:
        """The claims as the verifier read them (no finalAnswer: it is not an input)."""
        return {
            "version": EXECUTOR_OUTPUT_VERSION,
            "claims": [
                {
                    "claimId": c.claim_id,
                    "text": c.text,
                    "critical": c.critical,
                    "evidence": [{"refId": b.ref_id, "excerpt": b.excerpt} for b in c.evidence],
                }
                for c in self.claims
            ],
        }


def executor_output_parse(*, raw: Any) -> ParsedOutput:
    """Validate `raw` (the stored executorOutput JSON) and return its claims or the errors."""
    if raw is None or raw == {}:
        return ParsedOutput(status=MISSING, errors=["executorOutput is absent"])
    if not isinstance(raw, dict):
        return ParsedOutput(status=INVALID, errors=[f"executorOutput must be an object, got {type(raw).__name__}"])
    errors: list[str] = []
    if raw.get("version") != EXECUTOR_OUTPUT_VERSION:
        errors.append(f"version must be {EXECUTOR_OUTPUT_VERSION!r}, got {raw.get('version')!r}")
    items = raw.get("claims")
    if not isinstance(items, list):
        errors.append("claims must be a list")
        items = []
    claims: list[Claim] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        claim = _claim_parse(item, f"claims[{index}]", errors)
        if claim is None:
            continue
        if claim.claim_id in seen:
            errors.append(f"claims[{index}].claimId {claim.claim_id!r} is duplicated")
        seen.add(claim.claim_id)
        claims.append(claim)
    if errors:
        return ParsedOutput(status=INVALID, errors=errors)
    return ParsedOutput(status=VALID, claims=claims)


def _claim_parse(item: Any, path: str, errors: list[str]) -> Claim | None:
    if not isinstance(item, dict):
        errors.append(f"{path} must be an object")
        return None
    before = len(errors)
    claim_id, text = item.get("claimId"), item.get("text")
    if not isinstance(claim_id, str) or not claim_id.strip():
        errors.append(f"{path}.claimId must be a non-empty string")
    if not isinstance(text, str) or not text.strip():
        errors.append(f"{path}.text must be a non-empty string")
    critical = item.get("critical", False)
    if not isinstance(critical, bool):
        errors.append(f"{path}.critical must be a boolean")
    evidence = item.get("evidence", [])
    if not isinstance(evidence, list):
        errors.append(f"{path}.evidence must be a list")
        evidence = []
    bindings: list[Binding] = []
    for index, entry in enumerate(evidence):
        where = f"{path}.evidence[{index}]"
        if not isinstance(entry, dict):
            errors.append(f"{where} must be an object")
            continue
        ref_id, excerpt = entry.get("refId"), entry.get("excerpt", "")
        if not isinstance(ref_id, str) or not ref_id.strip():
            errors.append(f"{where}.refId must be a non-empty string")
            continue
        if excerpt is None:
            excerpt = ""
        if not isinstance(excerpt, str):
            errors.append(f"{where}.excerpt must be a string")
            continue
        bindings.append(Binding(ref_id=ref_id.strip(), excerpt=excerpt))
    if len(errors) > before:
        return None
    return Claim(claim_id=claim_id.strip(), text=text.strip(), critical=critical, evidence=tuple(bindings))
