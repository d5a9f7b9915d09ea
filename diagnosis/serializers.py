"""Input and output shapes of the session API (camelCase, as seed document 000's `sessionId`)."""

from typing import Any

import msgspec
from django.conf import settings
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import (
    BlankAsNullCharField,
    BlankAsNullChoiceField,
    BoundedListField,
    ColumnIntegerField,
    StrictCharField,
    StrictRegexField,
)
from diagnosis.constants import NO_EVIDENCE_REF
from diagnosis.evaluation_layers import LegacyJSONError, self_evaluation_from_agent
from diagnosis.models import (
    AiOpsVerdict,
    DiagnosisSession,
    DiagnosisStep,
    EvaluationState,
    FailureAttribution,
    Feedback,
    InvocationStatus,
    MatchLevel,
    SessionMode,
    SessionStatus,
    ToolInvocation,
    VerifierVerdict,
)
from diagnosis.services.producers.executor_output import ClaimLimits, executor_output_problem, executor_output_types

MAX_STEPS = 500
MAX_INVOCATIONS = 1000
MAX_REFS_PER_INVOCATION = 200
MAX_ACTIVE_ALERTS = 200


class AlertSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200)
    service = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
    severity = StrictCharField(max_length=32, required=False, allow_blank=True, default="")
    labels = serializers.DictField(required=False, default=dict)
    startsAt = StrictCharField(max_length=64, required=False, allow_blank=True, allow_null=True)


class ActiveAlertSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200)
    service = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
    severity = StrictCharField(max_length=32, required=False, allow_blank=True, default="")
    labels = serializers.DictField(required=False, default=dict)


class StepInputSerializer(serializers.Serializer):
    index = ColumnIntegerField(column=DiagnosisStep._meta.get_field("index"))
    name = StrictCharField(max_length=200)
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    detail = serializers.DictField(required=False, default=dict)


class EvidenceRefInputSerializer(serializers.Serializer):
    refId = StrictCharField(max_length=200)
    source = StrictCharField(max_length=500, required=False, allow_blank=True, default="")
    content = StrictCharField(allow_blank=True, trim_whitespace=False)

    def validate_refId(self, value: str) -> str:
        if value == NO_EVIDENCE_REF:
            raise serializers.ValidationError(f"{NO_EVIDENCE_REF} is reserved for claims without evidence.")
        return value


class RetrievalDetailsSerializer(serializers.Serializer):
    matchLevel = serializers.ChoiceField(choices=MatchLevel.choices)
    evidenceRefs = BoundedListField(
        child=EvidenceRefInputSerializer(), required=False, default=list, max_length=MAX_REFS_PER_INVOCATION
    )


class AnyJSONField(serializers.JSONField):
    """Raw tool output: a string or any JSON value."""


def claim_limits() -> ClaimLimits:
    return ClaimLimits(
        claims=settings.SELFEVAL_MAX_CLAIMS,
        evidence=settings.SELFEVAL_MAX_CLAIM_EVIDENCE,
        chars=settings.SELFEVAL_MAX_EXCERPT_CHARS,
    )


class ExecutorOutputField(serializers.DictField):
    """`executorOutput`, validated by the one definition of executor_evidence_v2 (msgspec Structs).

    An output of that shape past the limits (claims, bindings per claim, characters) is a 400
    naming the place (`claims.0.evidence.1.excerpt`). An output that is not executor_evidence_v2 at
    all is stored as sent and evaluated as INVALID, as seed document 000 asks: the session is still recorded.
    """

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        output = super().to_internal_value(data)
        if executor_output_problem(output) is None:
            problem = executor_output_problem(output, claim_limits())
            if problem is not None:
                path, message = problem
                raise serializers.ValidationError({path or "non_field_errors": [message.split(" - at `")[0] + "."]})
        return output


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


class ExecutorOutputFieldSchema(OpenApiSerializerFieldExtension):
    target_class = ExecutorOutputField

    def map_serializer_field(self, auto_schema, direction):
        return executor_output_or_any_schema(auto_schema)


class StoredExecutorOutputFieldSchema(OpenApiSerializerFieldExtension):
    target_class = StoredExecutorOutputField

    def map_serializer_field(self, auto_schema, direction):
        return {
            "anyOf": [*executor_output_or_any_schema(auto_schema)["anyOf"], {"type": "null"}],
            "description": "executor_evidence_v2 as sent; an output of another shape is kept as sent (INVALID).",
        }


class ToolInvocationInputSerializer(serializers.Serializer):
    invocationId = StrictCharField(max_length=128)
    stepIndex = ColumnIntegerField(
        column=ToolInvocation._meta.get_field("step_index"), required=False, allow_null=True, default=None
    )
    toolName = StrictCharField(max_length=200)
    status = serializers.ChoiceField(choices=InvocationStatus.choices)
    arguments = serializers.DictField(required=False, default=dict)
    output = AnyJSONField(required=False, allow_null=True, default=None)
    error = StrictCharField(required=False, allow_null=True, allow_blank=True, default=None)
    latencyMs = serializers.IntegerField(min_value=0, max_value=86_400_000, required=False, allow_null=True)
    retrievalDetails = RetrievalDetailsSerializer(required=False, allow_null=True, default=None)


class SessionIngestSerializer(serializers.Serializer):
    """`POST /api/sessions`: the whole session as the agent recorded it."""

    sessionId = StrictRegexField(r"^\S+$", max_length=128)
    conversationId = StrictRegexField(
        r"^\S+$",
        max_length=128,
        required=False,
        allow_null=True,
        default=None,
        help_text="The conversation this session is one turn of (an SDK's session id); its turns share it.",
    )
    mode = serializers.ChoiceField(choices=SessionMode.choices)
    query = StrictCharField(max_length=20_000)
    answer = StrictCharField(required=False, allow_blank=True, default="", max_length=200_000)
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    error = StrictCharField(
        required=False, allow_null=True, allow_blank=True, default=None, max_length=20_000, help_text="why it failed"
    )
    createdAt = serializers.DateTimeField(required=False, allow_null=True, default=None)
    finishedAt = serializers.DateTimeField(required=False, allow_null=True, default=None)
    alert = AlertSerializer(required=False, allow_null=True, default=None)
    activeAlerts = BoundedListField(
        child=ActiveAlertSerializer(), required=False, default=list, max_length=MAX_ACTIVE_ALERTS
    )
    steps = BoundedListField(child=StepInputSerializer(), required=False, default=list, max_length=MAX_STEPS)
    toolInvocations = BoundedListField(
        child=ToolInvocationInputSerializer(), required=False, default=list, max_length=MAX_INVOCATIONS
    )
    executorOutput = ExecutorOutputField(
        required=False,
        allow_null=True,
        default=None,
        help_text=(
            "executor_evidence_v2: at most SELFEVAL_MAX_CLAIMS claims of at most SELFEVAL_MAX_CLAIM_EVIDENCE "
            "evidence bindings; claim texts and excerpts of at most SELFEVAL_MAX_EXCERPT_CHARS characters (more is "
            "a 400). An output that is not of this shape at all is stored as sent and evaluated as INVALID."
        ),
    )
    selfEvaluation = serializers.DictField(
        required=False,
        allow_null=True,
        default=None,
        help_text=(
            "The agent's own legacy self_evaluation JSON: root keys are wrapped into their layers and every "
            "layer is kept marked source: legacy (history, never SelfEval's verdict) until a producer replaces it."
        ),
    )

    def validate_selfEvaluation(self, legacy: dict[str, Any] | None) -> dict[str, Any] | None:
        if legacy is not None:
            try:
                self_evaluation_from_agent(legacy)
            except LegacyJSONError as error:
                raise serializers.ValidationError({error.path or "non_field_errors": [error.message]}) from None
        return legacy

    def validate_steps(self, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        _reject_duplicates([step["index"] for step in steps], "step index")
        return steps

    def validate_toolInvocations(self, invocations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        _reject_duplicates([inv["invocationId"] for inv in invocations], "invocationId")
        ref_ids = [
            ref["refId"]
            for inv in invocations
            if inv.get("retrievalDetails")
            for ref in inv["retrievalDetails"]["evidenceRefs"]
        ]
        _reject_duplicates(ref_ids, "refId")
        return invocations

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        created, finished = attrs.get("createdAt"), attrs.get("finishedAt")
        if created and finished and finished < created:
            raise serializers.ValidationError({"finishedAt": "Must not be earlier than createdAt."})
        step_indexes = {step["index"] for step in attrs["steps"]}
        if step_indexes:
            for position, inv in enumerate(attrs["toolInvocations"]):
                if inv["stepIndex"] is not None and inv["stepIndex"] not in step_indexes:
                    raise serializers.ValidationError(
                        {"toolInvocations": {position: {"stepIndex": f"No step has index {inv['stepIndex']}."}}}
                    )
        return attrs


def _reject_duplicates(values: list[Any], label: str) -> None:
    seen: set[Any] = set()
    duplicates = sorted({str(v) for v in values if v in seen or seen.add(v)})
    if duplicates:
        raise serializers.ValidationError(f"Duplicate {label}: {', '.join(duplicates[:10])}")


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
