"""The typed `self_evaluation` container: its one reader and its one writer (no ORM here).

`DiagnosisSession.self_evaluation` holds seed document 000's layered container, snake_case keys exactly as
seed document 000 names them (claim-level entries keep the executor's camelCase `claimId` / `refId`):

    {"rule_evaluation": RuleEvaluation, "verifier_evaluation": VerifierEvaluation,
     "aiops_rule_evaluation": AiOpsRuleEvaluation, ...unknown root keys kept as stored}

Each layer is a msgspec Struct; the producers build them, `self_evaluation_write` (called by the
merge service, under the session's row lock) encodes them into the container, and
`self_evaluation_read` is how everything else (trace API, inspector, orchestration) reads it.

What is stored is not always what this version writes: legacy root keys (seed document 000, section 3) are
moved into their layer on every read and write (`migrate_legacy_layout`), and a layer that does
not have this shape (agent-sent legacy JSON, data of an older version) is reported in
`SelfEvaluation.invalid` with its error and its raw JSON, never raised. Fields a layer of an
older version lacks take their defaults; keys this version does not know are ignored on read
and kept on write: a layer no producer replaced is written back exactly as it was stored.

Machine text (rationales, reasons, details) is stored as the English text with, beside it, its
`diagnosis.messages` code and parameters (`reason`, `reason_code`, `reason_params`): clients read
the text, the admin translates the code. Layers of an older version have no code and show the text.

Legacy JSON (the agent's own `selfEvaluation`) is history, not SelfEval's judgement: its root keys
are wrapped into their layers, every layer it holds (wrapped or sent layered) is marked
`"source": "legacy"` (`self_evaluation_from_agent`, which also validates and bounds it at
ingestion), and such a layer is kept, visibly marked, until a producer replaces it (removing it is refused: the verifier layer of an AIOps
report without executor output, which no producer writes, survives every evaluation). A legacy
layer never fills the mirrored columns: the verdict, groundedness and score columns (and so the
dashboard, the triage queue, calibration and the verifier's bad cases) hold only what SelfEval's
producers decided, and a legacy round never numbers the verifier's rounds (`SelfEvaluation.produced`).

A round past the `ClaimCheck.round` column does not read as a layer; the agent's scores are held
to their scales at ingestion (a produced score always is: the producers clamp it).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field

from diagnosis.constants import (
    AiOpsCheckSeverity,
    AiOpsVerdict,
    ClaimBand,
    ClaimDecider,
    ClaimVerdict,
    Layer,
    VerifierVerdict,
)
from diagnosis.services.producers.config import VerifierThresholds

# The largest round `ClaimCheck.round` (a PositiveIntegerField) holds, and the scores' scales.
ROUND_MAX = 2**31 - 1
Round = Annotated[int, Meta(ge=0, le=ROUND_MAX)]
EvidenceScore = Annotated[int, Meta(ge=0, le=100)] | Annotated[float, Meta(ge=0, le=100)]
Groundedness = Annotated[float, Meta(ge=0, le=1)]

# --- rule_evaluation ------------------------------------------------------------------------


class RuleFactor(Struct, kw_only=True):
    rule: str
    delta: int
    detail: str = ""
    detail_code: str = ""  # `diagnosis.messages` code of `detail`, with its parameters
    detail_params: dict[str, Any] = {}
    sets_score: int | UnsetType = UNSET  # only the rules that end the evaluation (score 0)
    invocations: list[str] | UnsetType = UNSET  # the calls with the hit (L0 / L1 rules)


class RuleEvaluation(Struct, kw_only=True):
    evidence_score: int | float | None = None  # a float only in legacy JSON
    source: str | None = None  # "rule", or "legacy" when wrapped from legacy root keys
    factors: list[RuleFactor] = []
    partial: bool = False  # scored while the session was still RUNNING


# --- verifier_evaluation --------------------------------------------------------------------


Probability = Annotated[float, Meta(ge=0, le=1)]


class JudgeReason(Struct, kw_only=True):
    """One of a claim's strongest reasons: a `diagnosis.messages` code, its parameters, its English text."""

    code: str
    params: dict[str, Any] = {}
    text: str = ""


class ClaimCheckEntry(Struct, kw_only=True):
    claim_id: str = field(name="claimId")
    text: str = ""
    critical: bool = False
    verdict: ClaimVerdict
    rationale: str = ""
    rationale_code: str = ""
    rationale_params: dict[str, Any] = {}
    judge: str = ""
    # The decision: calibrated P(supported) and P(contradicted) (null when no model scored the
    # claim), the band they fall in, who decided (rule / deterministic / llm; null in older
    # layers) and the three strongest reasons.
    p_supported: Probability | None = None
    p_contradicted: Probability | None = None
    band: ClaimBand | None = None
    decided_by: ClaimDecider | None = None
    reasons: list[JudgeReason] = []
    escalated: bool = False  # the cascade asked the LLM judge
    absence_claim: bool = False
    ref_ids: list[str] = field(default_factory=list, name="refIds")  # refs whose binding was verified
    bindings: list[str] = []  # the gatekeeper status of each of the claim's bindings


class FactCheck(Struct, kw_only=True):
    """One fact of a claim (number, code, name, ...) and whether the verified evidence states it."""

    kind: str
    value: Any = None
    family: str = ""
    text: str = ""
    claim_id: str = field(default="", name="claimId")
    critical: bool = False
    status: str = ""  # STATED | MISMATCH | ABSENT
    stated: bool = False
    evidence_values: list[Any] = []


class GatekeeperBinding(Struct, kw_only=True):
    """The gatekeeper's result for one evidence binding (also a `ClaimCheck.bindings` item)."""

    claim_id: str = field(name="claimId")
    ref_id: str = field(name="refId")
    excerpt: str = ""
    status: str  # VERIFIED | REF_NOT_FOUND | REF_FROM_FAILED_CALL | EXCERPT_MISMATCH | NO_EVIDENCE
    reason: str = ""
    reason_code: str = ""
    reason_params: dict[str, Any] = {}
    invocation_id: str = field(default="", name="invocationId")
    tool: str = ""


class GatekeeperSummary(Struct, kw_only=True):
    total: int = 0
    verified: int = field(default=0, name="VERIFIED")
    ref_not_found: int = field(default=0, name="REF_NOT_FOUND")
    ref_from_failed_call: int = field(default=0, name="REF_FROM_FAILED_CALL")
    excerpt_mismatch: int = field(default=0, name="EXCERPT_MISMATCH")
    no_evidence: int = field(default=0, name="NO_EVIDENCE")
    passed: bool = True


class GatekeeperResult(Struct, kw_only=True):
    bindings: list[GatekeeperBinding] = []
    by_claim: dict[str, list[str]] = {}
    summary: GatekeeperSummary = field(default_factory=GatekeeperSummary)


class ParseFallback(Struct, kw_only=True):
    strategy: str
    verdict: VerifierVerdict
    reason: str
    reason_code: str = ""
    reason_params: dict[str, Any] = {}
    used: list[str] = []
    final_answer_used: bool = False


class ParseStatus(Struct, kw_only=True):
    status: str  # VALID | INVALID | MISSING
    errors: list[str] = []
    fallback: ParseFallback | None = None


class RetryClaim(Struct, kw_only=True):
    claim_id: str = field(name="claimId")
    text: str = ""
    verdict: ClaimVerdict
    critical: bool = False
    reason: str = ""
    reason_code: str = ""
    reason_params: dict[str, Any] = {}


class SuggestedTool(Struct, kw_only=True):
    tool: str
    category: str = ""
    claims: list[str] = []
    why: str = ""
    why_code: str = ""
    why_params: dict[str, Any] = {}


class RetryContext(Struct, kw_only=True):
    reason: str
    reason_code: str = ""
    reason_params: dict[str, Any] = {}
    claims: list[RetryClaim] = []
    suggested_tools: list[SuggestedTool] = []
    instruction: str | UnsetType = UNSET  # only when the executor output could not be read
    instruction_code: str | UnsetType = UNSET
    instruction_params: dict[str, Any] | UnsetType = UNSET


class ComposerSummary(Struct, kw_only=True):
    claims: int = 0
    supported: int = 0
    withheld: int = 0


class ComposerOutput(Struct, kw_only=True):
    language: str
    verdict: VerifierVerdict
    mode: str  # full | low_confidence | degraded | unverified
    answer: str = ""
    notice: str | None = None
    claims_used: list[str] = []
    claims_withheld: list[str] = []
    retry_context: RetryContext | None = None
    parse_status: str | None = None
    summary: ComposerSummary = field(default_factory=ComposerSummary)


class ToolTraceEntry(Struct, kw_only=True):
    invocation_id: str = field(name="invocationId")
    tool: str
    status: str
    match_level: str | None = field(default=None, name="matchLevel")
    ref_ids: list[str] = field(default_factory=list, name="refIds")
    latency_ms: int | None = field(default=None, name="latencyMs")
    step_index: int | None = field(default=None, name="stepIndex")
    cited_by: list[str] = field(default_factory=list, name="citedBy")


class JudgeSummary(Struct, kw_only=True):
    name: str
    fallback_claims: list[str] = []  # claims the LLM judge could not answer (deterministic fallback)
    # Claims the LLM was asked about (the cascade's escalations included) and how many.
    llm_claims: list[str] = []
    llm_count: int = 0
    escalated_claims: list[str] = []


class VerifierEvaluation(Struct, kw_only=True):
    source: str | UnsetType = UNSET  # "legacy" when wrapped from legacy root keys; producers write none
    verdict: VerifierVerdict | None = None
    groundedness_score: float | None = None
    critical_fact_count: int | None = None
    claim_checks: list[ClaimCheckEntry] = []
    facts_checked: list[FactCheck] = []
    rationale: str | None = None
    rationale_code: str = ""
    rationale_params: dict[str, Any] = {}
    round: Round | None = None
    traceability_version: str | None = None
    executor_output_parse_status: ParseStatus | None = None
    # The claims as the verifier read them, or the raw executor output when it could not be read.
    executor_structured_output: Any = None
    gatekeeper_result: GatekeeperResult | None = None
    composer_output: ComposerOutput | None = None
    tool_trace_summary: list[ToolTraceEntry] = []
    evidence_fingerprint: str | None = None
    judge: JudgeSummary | None = None
    thresholds: VerifierThresholds | None = None


# --- aiops_rule_evaluation ------------------------------------------------------------------


class AiOpsCheckEntry(Struct, kw_only=True):
    check: str
    passed: bool
    reason: str = ""
    reason_code: str = ""
    reason_params: dict[str, Any] = {}
    severity: AiOpsCheckSeverity = AiOpsCheckSeverity.CRITICAL
    applicable: bool = True  # a check that does not apply passes and never changes the verdict
    categories: dict[str, bool] | UnsetType = UNSET  # evidence_tools_succeeded: category -> succeeded
    tools: list[str] | UnsetType = UNSET  # evidence_<category>: the tools of it that were called
    alert: dict[str, Any] | UnsetType = UNSET  # unrelated_alerts_not_main_object: the alert it is about


class AiOpsRuleEvaluation(Struct, kw_only=True):
    source: str | UnsetType = UNSET  # "legacy" when the agent sent it; the producer writes none
    verdict: AiOpsVerdict | None = None
    checks: list[AiOpsCheckEntry] = []
    failed_checks: list[str] = []  # the applicable checks that failed, critical ones first


# --- the container: reader and writer -------------------------------------------------------

LayerValue = RuleEvaluation | VerifierEvaluation | AiOpsRuleEvaluation
LAYER_TYPES: dict[Layer, type[LayerValue]] = {
    Layer.RULE: RuleEvaluation,
    Layer.VERIFIER: VerifierEvaluation,
    Layer.AIOPS: AiOpsRuleEvaluation,
}

LEGACY_SOURCE = "legacy"
# Root keys of the legacy flat JSON and the layer each one belongs to (seed document 000, section 3).
_LEGACY_ROOT_KEYS = {
    "evidence_score": Layer.RULE,
    "verdict": Layer.VERIFIER,
    "groundedness_score": Layer.VERIFIER,
}


def migrate_legacy_layout(container: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return a layered copy of `container`: legacy root keys are moved into their layer, which
    is marked `"source": "legacy"`.

    A layer already present wins over the legacy root values: they only fill the keys it lacks,
    and it is not labelled `source: legacy` (it is already layered). Unknown root keys are kept
    as they are so nothing the agent stored is thrown away.
    """
    layered: dict[str, Any] = {}
    legacy: dict[str, dict[str, Any]] = {}
    for key, value in (container or {}).items():
        layer = _LEGACY_ROOT_KEYS.get(key)
        if layer is None:
            layered[key] = value
        else:
            legacy.setdefault(layer, {})[key] = value
    for layer, values in legacy.items():
        current = layered.get(layer)
        if isinstance(current, dict):
            layered[layer] = {**values, **current}
        else:
            layered[layer] = {**values, "source": LEGACY_SOURCE}
    return layered


def _is_legacy(layer: Any) -> bool:
    """Whether a stored layer, or a typed one, was wrapped from legacy JSON rather than produced."""
    source = layer.get("source") if isinstance(layer, dict) else getattr(layer, "source", None)
    return source == LEGACY_SOURCE


@dataclass(frozen=True, slots=True)
class InvalidLayer:
    name: str
    error: str  # msgspec's message, with the JSON path of the first problem
    raw: Any  # the layer as stored, for display


@dataclass(frozen=True, slots=True)
class SelfEvaluation:
    """The container read: its JSON (legacy layout migrated) and each layer typed, or invalid."""

    container: dict[str, Any]
    rule: RuleEvaluation | None = None
    verifier: VerifierEvaluation | None = None
    aiops: AiOpsRuleEvaluation | None = None
    invalid: tuple[InvalidLayer, ...] = ()

    def layer(self, name: Layer) -> LayerValue | None:
        return {Layer.RULE: self.rule, Layer.VERIFIER: self.verifier, Layer.AIOPS: self.aiops}[name]

    def produced(self, name: Layer) -> LayerValue | None:
        """The layer when one of SelfEval's producers wrote it: None when absent, invalid or legacy."""
        layer = self.layer(name)
        return None if _is_legacy(layer) else layer

    def mirrored_columns(self) -> dict[str, Any]:
        """The session columns that mirror the layers, for filtering without JSON lookups.

        An absent, invalid or legacy layer mirrors nothing (null or blank)."""
        rule, verifier, aiops = (self.produced(name) for name in (Layer.RULE, Layer.VERIFIER, Layer.AIOPS))
        score = rule.evidence_score if rule else None
        return {
            "evidence_score": None if score is None else max(0, min(100, int(score))),
            "verifier_verdict": (verifier.verdict if verifier else None) or "",
            "groundedness_score": verifier.groundedness_score if verifier else None,
            "aiops_verdict": (aiops.verdict if aiops else None) or "",
        }


def self_evaluation_read(stored: Any) -> SelfEvaluation:
    """Read a stored container (any JSON value); never raises."""
    if not isinstance(stored, dict):
        stored = {}
    container = migrate_legacy_layout(stored)
    layers: dict[str, LayerValue] = {}
    invalid = []
    for name, kind in LAYER_TYPES.items():
        if name not in container:
            continue
        try:
            layers[name] = msgspec.convert(container[name], kind)
        except msgspec.ValidationError as exc:
            invalid.append(InvalidLayer(name=name, error=str(exc), raw=container[name]))
    return SelfEvaluation(
        container=container,
        rule=layers.get(Layer.RULE),
        verifier=layers.get(Layer.VERIFIER),
        aiops=layers.get(Layer.AIOPS),
        invalid=tuple(invalid),
    )


def self_evaluation_write(stored: Any, layers: Mapping[str, LayerValue | None]) -> SelfEvaluation:
    """The container with `layers` replaced, as it is to be stored.

    `layers` maps layer names to their new value, or to None to remove that layer unless it is a
    legacy layer (module docstring); the other layers and unknown root keys stay exactly as stored. Raises ValueError for an unknown layer
    name or a value of another layer's type: nothing is written then.
    """
    unknown = sorted(set(layers) - set(LAYER_TYPES))
    if unknown:
        raise ValueError(f"unknown self_evaluation layers: {unknown}")
    wrong = sorted(
        name for name, value in layers.items() if value is not None and type(value) is not LAYER_TYPES[Layer(name)]
    )
    if wrong:
        raise ValueError(f"self_evaluation layers must be their layer's type or None (remove): {wrong}")
    container = migrate_legacy_layout(stored if isinstance(stored, dict) else {})
    for name, value in layers.items():
        if value is None:
            if not _is_legacy(container.get(name)):
                container.pop(name, None)
        else:
            container[name] = layer_json(value)
    return self_evaluation_read(container)


class _LegacyScores(Struct, kw_only=True):
    """The agent's scores on their scales, in its root keys and in its layers alike."""

    evidence_score: EvidenceScore | None = None
    groundedness_score: Groundedness | None = None


class _LegacyRoot(_LegacyScores, kw_only=True):
    """Seed document 000's flat legacy keys, each wrapped into its layer (`_LEGACY_ROOT_KEYS`)."""

    verdict: VerifierVerdict | None = None


class LegacyJSONError(ValueError):
    """The agent's legacy JSON holds a value its layer's type refuses; `path` names it (dotted,
    from the root of `selfEvaluation`, empty for the root itself)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def _legacy_check(value: Any, kind: type[Struct], prefix: str) -> None:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `$")
        inner = where.rstrip("`").replace("[", ".").replace("]", "").lstrip(".")
        raise LegacyJSONError(".".join(part for part in (prefix, inner) if part), message) from None


def self_evaluation_from_agent(raw: Mapping[str, Any]) -> SelfEvaluation:
    """The container for the `selfEvaluation` an agent sends at ingestion: validated (root keys
    and each layer read as their types, scores on their scales, rounds within the column), root
    keys wrapped into their layers, and every layer marked legacy, whatever `source` it claims.
    Unknown keys are kept as sent. Raises LegacyJSONError naming the first invalid value."""
    _legacy_check({key: raw[key] for key in _LEGACY_ROOT_KEYS if key in raw}, _LegacyRoot, "")
    for name, kind in LAYER_TYPES.items():
        if name in raw:
            _legacy_check(raw[name], kind, name)
            _legacy_check(raw[name], _LegacyScores, name)
    container = migrate_legacy_layout(raw)
    for name in LAYER_TYPES:
        if name in container:
            container[name] = {**container[name], "source": LEGACY_SOURCE}
    return self_evaluation_read(container)


def layer_json(value: Struct) -> Any:
    """A layer (or any part of one) as the JSON it is stored as."""
    return msgspec.to_builtins(value)


def entries_read[T](raw: Any, kind: type[T]) -> list[T] | None:
    """A stored JSON list of `kind` (e.g. `ClaimCheck.bindings`), or None when it is not one."""
    try:
        return msgspec.convert(raw, list[kind])
    except msgspec.ValidationError:
        return None
