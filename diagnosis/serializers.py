"""Input and output shapes of the session API (camelCase, as seed document 000's `sessionId`).

The ingestion payload (`POST /api/sessions`, each batch item, an OTLP trace's session, an import
line) is defined once, as msgspec Structs (`SessionIngest`), beside the executor_evidence_v2 Structs
its `executorOutput` is checked with: `session_ingest_from_body` validates a parsed body with them
and refuses it in the API's envelope (`core.api.structs`), and its JSON Schema is the
`SessionIngestRequest` component.
"""

from datetime import datetime
from typing import Annotated, Any

import msgspec
from django.conf import settings
from django.utils import timezone
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import extend_schema_field
from msgspec import UNSET, Meta, Struct, UnsetType
from rest_framework import serializers

from core.api.fields import NOT_BLANK_PATTERN, BlankAsNullCharField, BlankAsNullChoiceField
from core.api.structs import StructSchema, struct_from_body
from diagnosis.constants import NO_EVIDENCE_REF
from diagnosis.evaluation_layers import LegacyJSONError, self_evaluation_from_agent
from diagnosis.models import (
    AiOpsVerdict,
    DiagnosisSession,
    EvaluationState,
    FailureAttribution,
    Feedback,
    InvocationStatus,
    MatchLevel,
    SessionMode,
    SessionStatus,
    VerifierVerdict,
)
from diagnosis.services.producers.executor_output import ClaimLimits, executor_output_problem, executor_output_types


def claim_limits() -> ClaimLimits:
    return ClaimLimits(
        claims=settings.SELFEVAL_MAX_CLAIMS,
        evidence=settings.SELFEVAL_MAX_CLAIM_EVIDENCE,
        chars=settings.SELFEVAL_MAX_EXCERPT_CHARS,
    )


class StoredExecutorOutputField(serializers.JSONField):
    """`executorOutput` as stored: an executor_evidence_v2 output, or what the agent sent when it
    was not one (evaluated as INVALID), or null."""


def executor_output_schema(auto_schema) -> dict[str, Any]:
    """A reference to the `ExecutorEvidenceV2` component, registered on first use: the msgspec
    types' JSON Schema 2020-12 (with the settings' limits), which OpenAPI 3.1 takes as it is."""
    (root,), components = msgspec.json.schema_components(
        [executor_output_types(claim_limits())[0]], ref_template="#/components/schemas/{name}"
    )
    for name, schema in components.items():
        component = ResolvedComponent(
            name=name, type=ResolvedComponent.SCHEMA, object=name, schema=_typed_literals(schema)
        )
        auto_schema.registry.register_on_missing(component)
    return root


def _typed_literals(schema: Any) -> Any:
    """msgspec writes a string Literal as a bare `enum`; drf-spectacular's enum components need its type."""
    if isinstance(schema, list):
        return [_typed_literals(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    typed = {key: _typed_literals(value) for key, value in schema.items()}
    if "enum" in typed and "type" not in typed and all(isinstance(value, str) for value in typed["enum"]):
        typed["type"] = "string"
    return typed


def executor_output_or_any_schema(auto_schema) -> dict[str, Any]:
    """An output the API takes and answers: executor_evidence_v2, or any other object, kept as sent
    and evaluated INVALID (seed document 000's fallback), so no schema-valid output of another shape is refused."""
    return {"anyOf": [executor_output_schema(auto_schema), {"type": "object", "additionalProperties": {}}]}


class StoredExecutorOutputFieldSchema(OpenApiSerializerFieldExtension):
    target_class = StoredExecutorOutputField

    def map_serializer_field(self, auto_schema, direction):
        return {
            "anyOf": [*executor_output_or_any_schema(auto_schema)["anyOf"], {"type": "null"}],
            "description": "executor_evidence_v2 as sent; an output of another shape is kept as sent (INVALID).",
        }


# ---- the ingestion payload: msgspec Structs, its one definition ----

MAX_STEPS = 500
MAX_INVOCATIONS = 1000
MAX_REFS_PER_INVOCATION = 200
MAX_ACTIVE_ALERTS = 200

_COLUMN_INTEGER = Meta(ge=0, le=2_147_483_647)  # a PositiveIntegerField, on every database
# Any JSON object (msgspec's schema of a dict says only "object"), and an RFC 3339 instant.
_OBJECT = Annotated[dict[str, Any], Meta(extra_json_schema={"additionalProperties": {}})]
_INSTANT = Annotated[datetime, Meta(extra_json_schema={"format": "date-time"})]


def _text(max_length: int | None = None) -> Any:
    """Text that holds a character besides whitespace (trimmed, as DRF's CharField trims it)."""
    return Annotated[str, Meta(min_length=1, pattern=NOT_BLANK_PATTERN, max_length=max_length)]


def _strip(struct: Struct, *names: str) -> None:
    """Trim the text fields `names` of `struct`, as DRF's CharField did (str.strip)."""
    for name in names:
        value = getattr(struct, name)
        if isinstance(value, str):
            setattr(struct, name, value.strip())


class ActiveAlert(Struct, kw_only=True, rename="camel"):
    """Another alert firing while the session ran."""

    name: _text(200)
    service: Annotated[str, Meta(max_length=200)] = ""
    severity: Annotated[str, Meta(max_length=32)] = ""
    labels: _OBJECT = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        _strip(self, "name", "service", "severity")


class Alert(ActiveAlert, kw_only=True, rename="camel"):
    """The alert that started an AIOps session."""  # an active alert's fields, and when it started

    starts_at: Annotated[str, Meta(max_length=64)] | None | UnsetType = UNSET

    def __post_init__(self) -> None:
        super().__post_init__()
        _strip(self, "starts_at")


class StepInput(Struct, kw_only=True, rename="camel"):
    index: Annotated[int, _COLUMN_INTEGER]
    name: _text(200)
    status: SessionStatus
    detail: _OBJECT = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        _strip(self, "name")


class EvidenceRefInput(Struct, kw_only=True, rename="camel"):
    ref_id: _text(200)
    source: Annotated[str, Meta(max_length=500)] = ""
    content: str  # kept as sent, whitespace included: it is what the claims quote

    def __post_init__(self) -> None:
        _strip(self, "ref_id", "source")


class RetrievalDetails(Struct, kw_only=True, rename="camel"):
    match_level: MatchLevel
    evidence_refs: Annotated[list[EvidenceRefInput], Meta(max_length=MAX_REFS_PER_INVOCATION)] = msgspec.field(
        default_factory=list
    )


class ToolInvocationInput(Struct, kw_only=True, rename="camel"):
    invocation_id: _text(128)
    step_index: Annotated[int, _COLUMN_INTEGER] | None = None
    tool_name: _text(200)
    status: InvocationStatus
    arguments: _OBJECT = msgspec.field(default_factory=dict)
    output: Any = None
    error: str | None = None
    latency_ms: Annotated[int, Meta(ge=0, le=86_400_000)] | None = None
    retrieval_details: RetrievalDetails | None = None

    def __post_init__(self) -> None:
        _strip(self, "invocation_id", "tool_name", "error")


_SESSION_ID = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^\S+$")]


class SessionIngest(Struct, kw_only=True, rename="camel"):
    """`POST /api/sessions`: the whole session as the agent recorded it."""

    session_id: _SESSION_ID
    conversation_id: (
        Annotated[
            _SESSION_ID,
            Meta(description="The conversation this session is one turn of (an SDK's session id); its turns share it."),
        ]
        | None
    ) = None
    mode: SessionMode
    query: _text(20_000)
    answer: Annotated[str, Meta(max_length=200_000)] = ""
    status: SessionStatus
    error: Annotated[str, Meta(max_length=20_000, description="why it failed")] | None = None
    created_at: _INSTANT | None = None
    finished_at: _INSTANT | None = None
    alert: Alert | None = None
    active_alerts: Annotated[list[ActiveAlert], Meta(max_length=MAX_ACTIVE_ALERTS)] = msgspec.field(
        default_factory=list
    )
    steps: Annotated[list[StepInput], Meta(max_length=MAX_STEPS)] = msgspec.field(default_factory=list)
    tool_invocations: Annotated[list[ToolInvocationInput], Meta(max_length=MAX_INVOCATIONS)] = msgspec.field(
        default_factory=list
    )
    # Checked by the executor_evidence_v2 Structs within the settings' limits (session_ingest_from_body),
    # and documented as them (SessionIngestSchema).
    executor_output: Annotated[
        _OBJECT | None,
        Meta(
            description=(
                "executor_evidence_v2: at most SELFEVAL_MAX_CLAIMS claims of at most SELFEVAL_MAX_CLAIM_EVIDENCE "
                "evidence bindings; claim texts and excerpts of at most SELFEVAL_MAX_EXCERPT_CHARS characters (more "
                "is a 400). An output that is not of this shape at all is stored as sent and evaluated as INVALID."
            ),
        ),
    ] = None
    self_evaluation: Annotated[
        _OBJECT | None,
        Meta(
            description=(
                "The agent's own legacy self_evaluation JSON: root keys are wrapped into their layers and every "
                "layer is kept marked source: legacy (history, never SelfEval's verdict) until a producer replaces it."
            )
        ),
    ] = None

    def __post_init__(self) -> None:
        _strip(self, "session_id", "conversation_id", "query", "answer", "error")


def session_ingest_from_body(data: Any) -> SessionIngest:
    """`data` (a parsed session payload) as a `SessionIngest`, or ValidationError({path: [message]})
    in the API's envelope: every invalid top-level field named (as DRF named them), then the rules
    across fields (duplicates, the executor output's limits, the legacy JSON, step indexes)."""
    payload = struct_from_body(data, SessionIngest, every_field=True)
    errors: dict[str, list[str]] = {}
    for name, attribute in (("createdAt", "created_at"), ("finishedAt", "finished_at")):
        if (value := getattr(payload, attribute)) is not None:
            try:
                setattr(payload, attribute, _aware(value))
            except OverflowError:
                errors[name] = ["Datetime value out of range."]
    # Past the limits is a 400; not executor_evidence_v2 at all is stored as sent (evaluated INVALID).
    # The unbounded check runs only when the bounded one fails.
    if payload.executor_output is not None:
        problem = executor_output_problem(payload.executor_output, claim_limits())
        if problem is not None and executor_output_problem(payload.executor_output) is None:
            path, message = problem
            errors[f"executorOutput.{path or 'non_field_errors'}"] = [message.split(" - at `")[0] + "."]
    if payload.self_evaluation is not None:
        try:
            self_evaluation_from_agent(payload.self_evaluation)
        except LegacyJSONError as error:
            errors[f"selfEvaluation.{error.path or 'non_field_errors'}"] = [error.message]
    if duplicate := _duplicates([step.index for step in payload.steps], "step index"):
        errors["steps"] = [duplicate]
    reserved = [
        f"toolInvocations.{position}.retrievalDetails.evidenceRefs.{ref_position}.refId"
        for position, inv in enumerate(payload.tool_invocations)
        if inv.retrieval_details
        for ref_position, ref in enumerate(inv.retrieval_details.evidence_refs)
        if ref.ref_id == NO_EVIDENCE_REF
    ]
    for path in reserved:
        errors[path] = [f"{NO_EVIDENCE_REF} is reserved for claims without evidence."]
    if not reserved:
        refs = [
            ref.ref_id
            for inv in payload.tool_invocations
            if inv.retrieval_details
            for ref in inv.retrieval_details.evidence_refs
        ]
        duplicate = _duplicates([inv.invocation_id for inv in payload.tool_invocations], "invocationId")
        if duplicate := duplicate or _duplicates(refs, "refId"):
            errors["toolInvocations"] = [duplicate]
    if errors:
        raise serializers.ValidationError(errors)
    if payload.created_at and payload.finished_at and payload.finished_at < payload.created_at:
        raise serializers.ValidationError({"finishedAt": ["Must not be earlier than createdAt."]})
    step_indexes = {step.index for step in payload.steps}
    if step_indexes:
        for position, inv in enumerate(payload.tool_invocations):
            if inv.step_index is not None and inv.step_index not in step_indexes:
                raise serializers.ValidationError(
                    {f"toolInvocations.{position}.stepIndex": [f"No step has index {inv.step_index}."]}
                )
    return payload


def _aware(value: datetime) -> datetime:
    """In the current time zone, as DRF's DateTimeField gave it (a naive one is taken to be in it)."""
    if timezone.is_naive(value):
        return timezone.make_aware(value)
    return value.astimezone(timezone.get_current_timezone())


def _duplicates(values: list[Any], label: str) -> str | None:
    seen: set[Any] = set()
    duplicates = sorted({str(v) for v in values if v in seen or seen.add(v)})
    return f"Duplicate {label}: {', '.join(duplicates[:10])}" if duplicates else None


class SessionIngestSchema(StructSchema):
    """`SessionIngest` in the schema: its `executorOutput` is the `ExecutorEvidenceV2` component (the
    Structs that check it, with the settings' limits), any other object (kept, evaluated INVALID) or null."""

    target_class = SessionIngest
    match_subclasses = False
    priority = 1

    def map_serializer(self, auto_schema, direction) -> dict[str, Any]:
        schema = super().map_serializer(auto_schema, direction)
        output = schema["properties"]["executorOutput"]
        output["anyOf"] = [*executor_output_or_any_schema(auto_schema)["anyOf"], {"type": "null"}]
        return schema


class SessionSummarySerializer(serializers.ModelSerializer):
    """A row of `GET /api/sessions`."""

    sessionId = serializers.CharField(source="session_id")
    conversationId = BlankAsNullCharField(source="conversation_id", help_text="null: not part of a conversation")
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    mode = serializers.ChoiceField(choices=SessionMode.choices, read_only=True)
    language = serializers.ChoiceField(choices=["zh", "en"], read_only=True)
    status = serializers.ChoiceField(choices=SessionStatus.choices, read_only=True)
    feedback = BlankAsNullChoiceField(choices=Feedback.choices, help_text="null: no feedback yet")
    createdAt = serializers.DateTimeField(source="created_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)
    evidenceScore = serializers.IntegerField(source="evidence_score", allow_null=True)
    verifierVerdict = BlankAsNullChoiceField(
        source="verifier_verdict", choices=VerifierVerdict.choices, help_text="null: not judged by the verifier"
    )
    groundednessScore = serializers.FloatField(source="groundedness_score", allow_null=True)
    aiopsVerdict = BlankAsNullChoiceField(
        source="aiops_verdict", choices=AiOpsVerdict.choices, help_text="null: no AIOps rule evaluation"
    )
    failureAttribution = BlankAsNullChoiceField(
        source="failure_attribution", choices=FailureAttribution.choices, help_text="null: not evaluated yet"
    )
    evaluationState = serializers.ChoiceField(
        source="evaluation_state", choices=EvaluationState.choices, read_only=True
    )

    class Meta:
        model = DiagnosisSession
        fields = [
            "sessionId",
            "conversationId",
            "project",
            "mode",
            "language",
            "query",
            "status",
            "feedback",
            "createdAt",
            "finishedAt",
            "evidenceScore",
            "verifierVerdict",
            "groundednessScore",
            "aiopsVerdict",
            "failureAttribution",
            "evaluationState",
        ]
        read_only_fields = fields


# One instance answers every ingestion: a serializer deep-copies its declared fields and reads the
# model's fields on each instantiation, which cost 15 times the representation itself; the
# instance keeps no state between calls (no data, no context).
_SESSION_SUMMARY = SessionSummarySerializer()


def session_summary(session: DiagnosisSession) -> dict[str, Any]:
    """`session` as a row of `GET /api/sessions` (SessionSummarySerializer)."""
    return _SESSION_SUMMARY.to_representation(session)


class StepSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    detail = serializers.DictField()


class EvidenceRefSerializer(serializers.Serializer):
    refId = serializers.CharField(source="ref_id")
    source = serializers.CharField()
    content = serializers.CharField()
    contentSha256 = serializers.CharField(source="content_sha256")


class RetrievalDetailsOutputSerializer(serializers.Serializer):
    matchLevel = serializers.ChoiceField(choices=MatchLevel.choices)
    evidenceRefs = EvidenceRefSerializer(many=True)


class ToolInvocationSerializer(serializers.Serializer):
    invocationId = serializers.CharField(source="invocation_id")
    stepIndex = serializers.IntegerField(source="step_index", allow_null=True)
    toolName = serializers.CharField(source="tool_name")
    status = serializers.ChoiceField(choices=InvocationStatus.choices)
    arguments = serializers.DictField()
    output = serializers.JSONField()
    error = serializers.CharField(allow_null=True)
    latencyMs = serializers.IntegerField(source="latency_ms", allow_null=True)
    retrievalDetails = serializers.SerializerMethodField()

    @extend_schema_field(RetrievalDetailsOutputSerializer(allow_null=True))
    def get_retrievalDetails(self, invocation: Any) -> dict[str, Any] | None:
        if not invocation.match_level:
            return None
        return {
            "matchLevel": invocation.match_level,
            "evidenceRefs": EvidenceRefSerializer(invocation.evidence_refs.all(), many=True).data,
        }


class SessionContentSerializer(SessionSummarySerializer):
    """The summary plus what the agent reported: answer, alerts, structured executor output."""

    answer = serializers.CharField()
    error = BlankAsNullCharField(help_text="why the run failed, as the agent reported it; null: no error")
    alert = serializers.JSONField()
    activeAlerts = serializers.JSONField(source="active_alerts")
    executorOutput = StoredExecutorOutputField(source="executor_output")

    class Meta(SessionSummarySerializer.Meta):
        fields = [*SessionSummarySerializer.Meta.fields, "answer", "error", "alert", "activeAlerts", "executorOutput"]
        read_only_fields = fields


class SessionDetailSerializer(SessionContentSerializer):
    """`GET /api/sessions/<sessionId>`: the session as stored, with its self_evaluation."""

    selfEvaluation = serializers.JSONField(source="self_evaluation")
    steps = StepSerializer(many=True)
    toolInvocations = ToolInvocationSerializer(source="invocations", many=True)

    class Meta(SessionContentSerializer.Meta):
        fields = [*SessionContentSerializer.Meta.fields, "selfEvaluation", "steps", "toolInvocations"]
        read_only_fields = fields


class BatchItemErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="each invalid field of the item (dotted, camelCase) and its messages",
    )


class BatchItemResultSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="the item's position in the batch (0-based)")
    sessionId = serializers.CharField(allow_null=True, help_text="the item's sessionId when it names one")
    status = serializers.ChoiceField(choices=["created", "replaced", "error"])
    session = SessionSummarySerializer(required=False, help_text="the stored session (created or replaced)")
    error = BatchItemErrorSerializer(required=False, help_text="why the item was not stored (error)")


class BatchResultSerializer(serializers.Serializer):
    """`POST /api/sessions/batch`: one result per item, in the order of the items."""

    results = BatchItemResultSerializer(many=True)
