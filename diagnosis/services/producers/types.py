"""Plain data the evaluation producers read and write: no ORM, so they are fast to test and bench.

The orchestrator (`diagnosis.services.evaluation`) builds a `SessionData` from the database once,
runs `producers.pipeline.evaluate` and hands the result to the merge service.
"""

from dataclasses import dataclass, field
from typing import Any

from diagnosis.constants import ClaimBand, ClaimDecider, FailureAttribution, Layer
from diagnosis.evaluation_layers import FactCheck, GatekeeperBinding, JudgeReason, LayerValue
from diagnosis.messages import Message


@dataclass(frozen=True, slots=True)
class RefData:
    ref_id: str
    source: str
    content: str
    content_sha256: str
    invocation_id: str


@dataclass(frozen=True, slots=True)
class InvocationData:
    invocation_id: str
    step_index: int | None
    tool_name: str
    status: str  # "SUCCESS" | "FAILED"
    arguments: dict[str, Any]
    output: Any
    error: str
    latency_ms: int | None
    match_level: str  # "" (not a retrieval call) | "L0" | "L1" | "NONE"
    refs: tuple[RefData, ...] = ()

    @property
    def is_retrieval(self) -> bool:
        return bool(self.match_level)


@dataclass(frozen=True, slots=True)
class SessionData:
    session_id: str
    mode: str  # "chat" | "aiops"
    language: str  # "zh" | "en"
    query: str
    answer: str
    status: str  # "RUNNING" | "SUCCEEDED" | "FAILED"
    alert: dict[str, Any] | None
    active_alerts: list[dict[str, Any]]
    executor_output: dict[str, Any] | None
    invocations: tuple[InvocationData, ...]
    evidence_fingerprint: str = ""
    # From the stored verifier layer, if any: a new fingerprint starts round previous_round + 1.
    previous_round: int = 0
    previous_evidence_fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """One claim's verdict, also stored as a `ClaimCheck` row."""

    claim_id: str
    text: str
    critical: bool
    verdict: str  # SUPPORTED | UNSUPPORTED | CONTRADICTED | NO_EVIDENCE
    judge: str
    message: Message  # the rationale, as a `diagnosis.messages` code with its parameters
    facts: list[FactCheck]
    bindings: list[GatekeeperBinding]  # gatekeeper result per evidence binding
    service: str  # the service the claim is about, "" when none is named
    ref_ids: tuple[str, ...]  # refs that were checked (verified bindings)
    p_supported: float | None = None
    p_contradicted: float | None = None
    band: ClaimBand | None = None
    decided_by: ClaimDecider = ClaimDecider.RULE
    reasons: list[JudgeReason] = field(default_factory=list)

    @property
    def rationale(self) -> str:
        return self.message.text


@dataclass(slots=True)
class PipelineResult:
    # Only the layers that apply and whose producer succeeded.
    layers: dict[Layer, LayerValue] = field(default_factory=dict)
    claim_results: list[ClaimResult] = field(default_factory=list)
    failure_attribution: FailureAttribution = FailureAttribution.NONE
    round: int = 0
    # Producer name -> error message, for producers that raised; their layers are missing.
    errors: dict[str, str] = field(default_factory=dict)
    # Layers the session no longer qualifies for (e.g. re-posted as AIOps without executor
    # output): the orchestrator removes them from the stored container.
    inapplicable_layers: tuple[Layer, ...] = ()
