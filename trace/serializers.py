"""Output shape of `GET /api/trace/<sessionId>`, for the OpenAPI schema only: `trace.body` builds
the answer as plain values (what a nested serializer cost was most of a trace GET).

Every response the test suite receives is validated against the schema these make (tests/contract.py),
and tests/trace/test_trace_schema.py holds the body's keys to their fields, both ways.
"""

from trace.invocations import TraceInvocationSerializer, TracePageSerializer

from rest_framework import serializers

from cases.models import BadCaseCategory, BadCaseSource, BadCaseStatus, CaseSourceType, CaseStatus, FaultCategory
from core.api.fields import BlankAsNullChoiceField
from diagnosis.models import (
    AiOpsVerdict,
    ClaimBand,
    ClaimDecider,
    ClaimVerdict,
    EvaluationState,
    Feedback,
    SessionMode,
    SessionStatus,
    VerifierVerdict,
)
from diagnosis.serializers import SessionContentSerializer, StepSerializer, StoredExecutorOutputField
from feedback.models import FeedbackClient


class TraceSessionSerializer(SessionContentSerializer):
    evaluatedAt = serializers.DateTimeField(allow_null=True)
    evaluationError = serializers.CharField()

    class Meta(SessionContentSerializer.Meta):
        fields = [*SessionContentSerializer.Meta.fields, "evaluatedAt", "evaluationError"]
        read_only_fields = fields


class FeedbackEventSerializer(serializers.Serializer):
    value = serializers.ChoiceField(choices=Feedback.choices)
    comment = serializers.CharField()
    reviewer = serializers.CharField()
    client = serializers.ChoiceField(choices=FeedbackClient.choices)
    endUserId = serializers.CharField()
    user = serializers.CharField(default=None, allow_null=True)
    createdAt = serializers.DateTimeField()


class TraceCaseSerializer(serializers.Serializer):
    caseId = serializers.UUIDField()
    status = serializers.ChoiceField(choices=CaseStatus.choices)
    sourceType = serializers.ChoiceField(choices=CaseSourceType.choices)
    faultCategory = serializers.ChoiceField(choices=FaultCategory.choices)
    title = serializers.CharField()
    errorCode = serializers.CharField()
    service = serializers.CharField()
    reviewedAt = serializers.DateTimeField(allow_null=True)
    createdAt = serializers.DateTimeField()


class TraceBadCaseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=BadCaseStatus.choices)
    source = serializers.ChoiceField(choices=BadCaseSource.choices)
    category = BlankAsNullChoiceField(choices=BadCaseCategory.choices, help_text="null: not triaged yet")
    assignee = serializers.CharField(default=None, allow_null=True)
    verifierVerdict = BlankAsNullChoiceField(choices=VerifierVerdict.choices)
    feedbackCount = serializers.IntegerField()
    createdAt = serializers.DateTimeField()
    closedAt = serializers.DateTimeField(allow_null=True)


# Machine text is English, with its message code and parameters beside it (`diagnosis.messages`).
RATIONALE_CODE_HELP = "the rationale's message code (diagnosis/messages.py); empty for text of an older version"


class JudgeReasonSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="message code (diagnosis/messages.py)")
    params = serializers.DictField(help_text="the named parameters of the message")
    text = serializers.CharField(help_text="in English")


class ClaimCheckSerializer(serializers.Serializer):
    claimId = serializers.CharField()
    text = serializers.CharField()
    critical = serializers.BooleanField()
    verdict = serializers.ChoiceField(choices=ClaimVerdict.choices)
    judge = serializers.CharField()
    rationale = serializers.CharField(help_text="in English")
    rationaleCode = serializers.CharField(help_text=RATIONALE_CODE_HELP)
    rationaleParams = serializers.DictField(help_text="the named parameters of the rationale's message")
    pSupported = serializers.FloatField(
        allow_null=True, help_text="the judge's calibrated P(supported); null when no model scored the claim"
    )
    pContradicted = serializers.FloatField(allow_null=True, help_text="the judge's calibrated P(contradicted)")
    band = serializers.ChoiceField(
        choices=ClaimBand.choices,
        allow_null=True,
        help_text="where the scores fall; undecided is left UNSUPPORTED unless the cascade's LLM judge decides; "
        "null when no judge ran",
    )
    decidedBy = serializers.ChoiceField(
        choices=ClaimDecider.choices, allow_null=True, help_text="who decided the verdict; null for older layers"
    )
    reasons = JudgeReasonSerializer(many=True, help_text="the strongest reasons, at most three, strongest first")
    service = serializers.CharField()
    facts = serializers.ListField(child=serializers.DictField())
    bindings = serializers.ListField(child=serializers.DictField(), help_text="gatekeeper status per binding")


class RuleLayerSerializer(serializers.Serializer):
    evidenceScore = serializers.IntegerField(allow_null=True)
    source = serializers.CharField(allow_null=True)
    factors = serializers.ListField(
        child=serializers.DictField(),
        help_text='{"rule", "delta", "detail", "detail_code", "detail_params", ...} per rule',
    )


class VerifierLayerSerializer(serializers.Serializer):
    source = serializers.CharField(allow_null=True, help_text='"legacy" when wrapped from the agent\'s legacy JSON')
    verdict = serializers.ChoiceField(choices=VerifierVerdict.choices, allow_null=True)
    groundednessScore = serializers.FloatField(allow_null=True)
    criticalFactCount = serializers.IntegerField(allow_null=True)
    round = serializers.IntegerField(allow_null=True)
    rationale = serializers.CharField(allow_null=True, help_text="in English")
    rationaleCode = serializers.CharField(help_text=RATIONALE_CODE_HELP)
    rationaleParams = serializers.DictField(help_text="the named parameters of the rationale's message")
    traceabilityVersion = serializers.CharField(allow_null=True)
    claimChecks = ClaimCheckSerializer(many=True)
    factsChecked = serializers.ListField(child=serializers.DictField())
    gatekeeperBindings = serializers.ListField(child=serializers.DictField())
    gatekeeperSummary = serializers.DictField()
    executorOutputParseStatus = serializers.JSONField()
    executorStructuredOutput = StoredExecutorOutputField(
        allow_null=True, help_text="the executor output as the verifier read it (as stored when it was invalid)"
    )
    composerOutput = serializers.JSONField()
    toolTraceSummary = serializers.JSONField()


class AiOpsLayerSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=AiOpsVerdict.choices, allow_null=True)
    checks = serializers.ListField(
        child=serializers.DictField(),
        help_text='{"check", "passed", "reason", "reason_code", "reason_params", "severity", "applicable", ...} per check',
    )


class InvalidLayerSerializer(serializers.Serializer):
    layer = serializers.CharField()
    error = serializers.CharField(help_text="why the stored layer could not be read, with its JSON path")


class LayersSerializer(serializers.Serializer):
    ruleEvaluation = RuleLayerSerializer(allow_null=True)
    verifierEvaluation = VerifierLayerSerializer(allow_null=True)
    aiopsRuleEvaluation = AiOpsLayerSerializer(allow_null=True)
    invalidLayers = InvalidLayerSerializer(many=True, help_text="stored layers that could not be read (see raw)")
    raw = serializers.JSONField(help_text="the stored self_evaluation container as is (snake_case)")


class ExecutionViewSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    mode = serializers.ChoiceField(choices=SessionMode.choices)
    createdAt = serializers.DateTimeField()
    finishedAt = serializers.DateTimeField(allow_null=True)
    durationMs = serializers.IntegerField(allow_null=True)
    stepCount = serializers.IntegerField()
    invocationCount = serializers.IntegerField()
    failedInvocationCount = serializers.IntegerField()
    evaluationState = serializers.ChoiceField(choices=EvaluationState.choices)


class EvidenceViewSerializer(serializers.Serializer):
    rule = serializers.DictField(help_text="evidenceScore and the applied factors' rule names")
    verifier = serializers.DictField(help_text="verdict, groundednessScore and claim verdict counts")
    aiops = serializers.DictField(help_text="verdict and failed check names")


class UserViewSerializer(serializers.Serializer):
    feedback = serializers.ChoiceField(choices=Feedback.choices, allow_null=True, help_text="null: no feedback yet")
    feedbackHistory = FeedbackEventSerializer(many=True)
    case = TraceCaseSerializer(allow_null=True)
    badCase = TraceBadCaseSerializer(allow_null=True)


class ViewsSerializer(serializers.Serializer):
    execution = ExecutionViewSerializer()
    evidence = EvidenceViewSerializer()
    user = UserViewSerializer()


class ConversationTurnSerializer(serializers.Serializer):
    sessionId = serializers.CharField()
    createdAt = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    query = serializers.CharField()
    feedback = BlankAsNullChoiceField(choices=Feedback.choices, help_text="null: no feedback yet")
    current = serializers.BooleanField(read_only=True, help_text="this trace's own turn")


class ConversationSerializer(serializers.Serializer):
    conversationId = serializers.CharField()
    turns = ConversationTurnSerializer(
        many=True, help_text="the conversation's turns, oldest first (at most SELFEVAL_TRACE_CONVERSATION_TURNS)"
    )


class TraceSerializer(serializers.Serializer):
    """The whole trace; `views` are seed document 000's three angles on one diagnosis."""

    session = TraceSessionSerializer()
    steps = StepSerializer(many=True)
    toolInvocations = TraceInvocationSerializer(many=True, read_only=True)
    toolInvocationsPage = TracePageSerializer(read_only=True)
    feedback = BlankAsNullChoiceField(choices=Feedback.choices, help_text="null: no feedback yet", read_only=True)
    hasFeedback = serializers.BooleanField(read_only=True)
    hasRuleEvaluation = serializers.BooleanField(read_only=True)
    hasVerifierEvaluation = serializers.BooleanField(read_only=True)
    hasAiOpsRuleEvaluation = serializers.BooleanField(read_only=True)
    selfEvaluation = LayersSerializer(read_only=True)
    views = ViewsSerializer(read_only=True)
    conversation = ConversationSerializer(
        allow_null=True,
        read_only=True,
        help_text="the conversation this session is one turn of (its SDK's session id), feedback on each turn",
    )
