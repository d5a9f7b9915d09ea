"""Parsing the executor's structured output (`executor_evidence_v2`) into claims.

The shape is defined once, as msgspec Structs (`executor_output_types`): the session API validates
an agent's output with them (bounded by the settings' limits) and publishes their JSON Schema as
the `ExecutorEvidenceV2` component; the evaluation parses stored outputs with them.

Status: VALID (claims are judged), MISSING (no structured output at all) or INVALID (the error
names the first problem and its JSON path). Parsing is strict: one malformed claim makes the
whole output INVALID, because a partly-read output would silently drop claims.

Fallback when MISSING or INVALID (recorded in `fallback`): no claim is judged, the verifier
verdict is LOW_CONFID (unverifiable, not proven wrong), groundedness is null, and the composer
states that the answer could not be checked. `finalAnswer` is never parsed for facts: it is
debug context only, whether the output is valid or not.
"""

import functools
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NamedTuple

import msgspec
from msgspec import Meta, Struct

from core.text import json_sorted_keys
from diagnosis.constants import VerifierVerdict
from diagnosis.evaluation_layers import ParseFallback, ParseStatus
from diagnosis.messages import message

EXECUTOR_OUTPUT_VERSION = "executor_evidence_v2"

VALID = "VALID"
INVALID = "INVALID"
MISSING = "MISSING"

# A claim id, claim text or ref id must hold something besides whitespace (it is stripped).
_NOT_BLANK = r"\S"


class ClaimLimits(NamedTuple):
    """Bounds of an output an agent may send (SELFEVAL_MAX_CLAIMS, SELFEVAL_MAX_CLAIM_EVIDENCE,
    SELFEVAL_MAX_EXCERPT_CHARS); the evaluation reads stored outputs without them."""

    claims: int
    evidence: int
    chars: int


@functools.cache
def executor_output_types(limits: ClaimLimits | None = None) -> tuple[type[Struct], type[Struct], type[Struct]]:
    """The one definition of `executor_evidence_v2`: (ExecutorEvidenceV2, Claim, Binding), msgspec
    Structs, bounded by `limits` when given. Ingestion validates with the bounded types, the
    evaluation parses with the unbounded ones, and the OpenAPI component is their JSON Schema."""
    chars = limits.chars if limits else None

    class EvidenceBinding(Struct, frozen=True, rename="camel"):
        """One evidence binding: the ref the claim cites and the excerpt it quotes from it."""

        ref_id: Annotated[str, Meta(pattern=_NOT_BLANK, max_length=200)]  # the EvidenceRef column
        excerpt: Annotated[str, Meta(max_length=chars)] | None = ""

        def __post_init__(self) -> None:
            msgspec.structs.force_setattr(self, "ref_id", self.ref_id.strip())
            if self.excerpt is None:
                msgspec.structs.force_setattr(self, "excerpt", "")

    class ExecutorClaim(Struct, frozen=True, rename="camel"):
        """One claim of the answer, with the evidence bindings that should support it."""

        claim_id: Annotated[str, Meta(pattern=_NOT_BLANK, max_length=128)]  # the ClaimCheck column
        text: Annotated[str, Meta(pattern=_NOT_BLANK, max_length=chars)]
        critical: bool = False
        evidence: Annotated[tuple[EvidenceBinding, ...], Meta(max_length=limits.evidence if limits else None)] = ()

        def __post_init__(self) -> None:
            msgspec.structs.force_setattr(self, "claim_id", self.claim_id.strip())
            msgspec.structs.force_setattr(self, "text", self.text.strip())

    class ExecutorEvidenceV2(Struct, frozen=True, rename="camel"):
        """The executor's structured output: its claims; `finalAnswer` is debug context only."""

        version: Literal["executor_evidence_v2"]
        claims: Annotated[list[ExecutorClaim], Meta(max_length=limits.claims if limits else None)]
        final_answer: str | None = None

        def __post_init__(self) -> None:
            seen: set[str] = set()
            for index, claim in enumerate(self.claims):
                if claim.claim_id in seen:
                    raise ValueError(f"claims[{index}].claimId {claim.claim_id!r} is duplicated")
                seen.add(claim.claim_id)

    return ExecutorEvidenceV2, ExecutorClaim, EvidenceBinding


ExecutorEvidenceV2, Claim, Binding = executor_output_types()


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
            **message("executor_output.missing" if self.status == MISSING else "executor_output.invalid").fields(
                "reason"
            ),
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
    """Validate `raw` (the stored executorOutput JSON) and return its claims or the problem."""
    if raw is None or raw == {}:
        return ParsedOutput(status=MISSING, errors=["executorOutput is absent"])
    output, problem = _convert(raw, None)
    if problem is not None:
        return ParsedOutput(status=INVALID, errors=[problem[1]])
    return ParsedOutput(status=VALID, claims=list(output.claims))


def executor_output_problem(raw: Any, limits: ClaimLimits | None = None) -> tuple[str, str] | None:
    """Where and why `raw` is not an executor_evidence_v2 output (within `limits`), else None.
    The place is a dotted path (`claims.0.evidence.1.excerpt`, "" for the whole output)."""
    return _convert(raw, limits)[1]


_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")


def _convert(raw: Any, limits: ClaimLimits | None) -> tuple[Any, tuple[str, str] | None]:
    # msgspec reports the first problem in the order it reads the keys: read them sorted, so the
    # problem named (stored in the verifier's rationale) does not depend on the order they were sent
    # in, nor on jsonb's or an export's.
    try:
        return msgspec.convert(json_sorted_keys(raw), executor_output_types(limits)[0]), None
    except msgspec.ValidationError as error:
        message = str(error)
        found = _AT.search(message)
        path = re.sub(r"\[(\d+)\]", r".\1", found["path"] if found else "").lstrip(".")
        return None, (path, message)
