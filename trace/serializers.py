"""Output shape of `GET /api/trace/<sessionId>`: camelCase, the self_evaluation layers structured.

The layers are read with the typed reader (`diagnosis.evaluation_layers`) and laid out for
reading: rule factors, verifier claim checks with their facts and gatekeeper bindings, AIOps
checks. Claim checks come from the `ClaimCheck` rows of the latest round when there are any,
else from the verifier layer (sessions evaluated before the rows existed). A stored layer that
cannot be read is null here and listed in `invalidLayers`; `raw` still shows it.
"""

from trace.invocations import TraceInvocationSerializer, TracePageSerializer
from trace.selectors import Trace
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.utils.urls import replace_query_param

from cases.models import BadCaseCategory, BadCaseSource, BadCaseStatus, CaseSourceType, CaseStatus, FaultCategory
from core.api.fields import BlankAsNullChoiceField
from diagnosis.constants import Layer
from diagnosis.evaluation_layers import (
    FactCheck,
    GatekeeperBinding,
    JudgeReason,
    SelfEvaluation,
    VerifierEvaluation,
    entries_read,
    layer_json,
    self_evaluation_read,
)
from diagnosis.models import (
    AiOpsVerdict,
    ClaimBand,
    ClaimCheck,
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
    evaluatedAt = serializers.DateTimeField(source="evaluated_at", allow_null=True)
    evaluationError = serializers.CharField(source="evaluation_error")

    class Meta(SessionContentSerializer.Meta):
        fields = [*SessionContentSerializer.Meta.fields, "evaluatedAt", "evaluationError"]
        read_only_fields = fields


class FeedbackEventSerializer(serializers.Serializer):
    value = serializers.ChoiceField(choices=Feedback.choices)
    comment = serializers.CharField()
    reviewer = serializers.CharField()
    client = serializers.ChoiceField(choices=FeedbackClient.choices)
    endUserId = serializers.CharField(source="end_user_id")
    user = serializers.CharField(source="user.username", default=None, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")


class TraceCaseSerializer(serializers.Serializer):
    caseId = serializers.UUIDField(source="pk")
    status = serializers.ChoiceField(choices=CaseStatus.choices)
    sourceType = serializers.ChoiceField(source="source_type", choices=CaseSourceType.choices)
    faultCategory = serializers.ChoiceField(source="fault_category", choices=FaultCategory.choices)
    title = serializers.CharField()
    errorCode = serializers.CharField(source="error_code")
    service = serializers.CharField()
    reviewedAt = serializers.DateTimeField(source="reviewed_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")


class TraceBadCaseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=BadCaseStatus.choices)
    source = serializers.ChoiceField(choices=BadCaseSource.choices)
    category = BlankAsNullChoiceField(choices=BadCaseCategory.choices, help_text="null: not triaged yet")
    assignee = serializers.CharField(source="assignee.username", default=None, allow_null=True)
    verifierVerdict = BlankAsNullChoiceField(source="verifier_verdict", choices=VerifierVerdict.choices)
    feedbackCount = serializers.IntegerField(source="feedback_count")
    createdAt = serializers.DateTimeField(source="created_at")
    closedAt = serializers.DateTimeField(source="closed_at", allow_null=True)


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
    sessionId = serializers.CharField(source="session_id")
    createdAt = serializers.DateTimeField(source="created_at")
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    query = serializers.CharField()
    feedback = BlankAsNullChoiceField(choices=Feedback.choices, help_text="null: no feedback yet")
    current = serializers.SerializerMethodField(help_text="this trace's own turn")

    def get_current(self, turn) -> bool:
        return turn.session_id == self.context["session_id"]


class ConversationSerializer(serializers.Serializer):
    conversationId = serializers.CharField()
    turns = ConversationTurnSerializer(
        many=True, help_text="the conversation's turns, oldest first (at most SELFEVAL_TRACE_CONVERSATION_TURNS)"
    )


class TraceSerializer(serializers.Serializer):
    """The whole trace; `views` are seed document 000's three angles on one diagnosis."""

    session = TraceSessionSerializer()
    steps = StepSerializer(many=True)
    toolInvocations = serializers.SerializerMethodField()
    toolInvocationsPage = serializers.SerializerMethodField()
    feedback = serializers.SerializerMethodField()
    hasFeedback = serializers.SerializerMethodField()
    hasRuleEvaluation = serializers.SerializerMethodField()
    hasVerifierEvaluation = serializers.SerializerMethodField()
    hasAiOpsRuleEvaluation = serializers.SerializerMethodField()
    selfEvaluation = serializers.SerializerMethodField()
    views = serializers.SerializerMethodField()
    conversation = serializers.SerializerMethodField()

    @extend_schema_field(ConversationSerializer(allow_null=True))
    def get_conversation(self, trace: Trace) -> dict[str, Any] | None:
        """The session is one turn of a conversation (its SDK's session id): every turn, feedback on each."""
        if not trace.conversation:
            return None
        turns = ConversationTurnSerializer(
            trace.conversation, many=True, context={"session_id": trace.session.session_id}
        ).data
        return {"conversationId": trace.session.conversation_id, "turns": turns}

    @extend_schema_field(TraceInvocationSerializer(many=True))
    def get_toolInvocations(self, trace: Trace) -> list[dict[str, Any]]:
        context = {
            **self.context,
            "session_id": trace.session.session_id,
            "invocation_position": {inv.pk: inv.position for inv in trace.invocations},
        }
        return TraceInvocationSerializer(trace.invocations, many=True, context=context).data

    @extend_schema_field(TracePageSerializer)
    def get_toolInvocationsPage(self, trace: Trace) -> dict[str, Any]:
        page = trace.invocation_page
        url = self.context["request"].build_absolute_uri()
        following, preceding = page.offset + page.limit, max(0, page.offset - page.limit)
        return {
            "offset": page.offset,
            "limit": page.limit,
            "total": page.total,
            "next": replace_query_param(url, "invocationOffset", following) if following < page.total else None,
            "previous": replace_query_param(url, "invocationOffset", preceding) if page.offset > 0 else None,
        }

    @extend_schema_field(BlankAsNullChoiceField(choices=Feedback.choices, help_text="null: no feedback yet"))
    def get_feedback(self, trace: Trace) -> str | None:
        return trace.session.feedback or None

    def get_hasFeedback(self, trace: Trace) -> bool:
        return bool(trace.session.feedback)

    def get_hasRuleEvaluation(self, trace: Trace) -> bool:
        return _read(trace).rule is not None

    def get_hasVerifierEvaluation(self, trace: Trace) -> bool:
        return _read(trace).verifier is not None

    def get_hasAiOpsRuleEvaluation(self, trace: Trace) -> bool:
        return _read(trace).aiops is not None

    @extend_schema_field(LayersSerializer)
    def get_selfEvaluation(self, trace: Trace) -> dict[str, Any]:
        return structured_layers(trace)

    @extend_schema_field(ViewsSerializer)
    def get_views(self, trace: Trace) -> dict[str, Any]:
        session = trace.session
        layers, evaluation = structured_layers(trace), _read(trace)
        # The views say what SelfEval concluded: a legacy layer (the agent's own JSON) shows in the
        # structured layers, marked, and in no view.
        rule, verifier, aiops = (
            layers[key] if evaluation.produced(name) is not None else None
            for key, name in (
                ("ruleEvaluation", Layer.RULE),
                ("verifierEvaluation", Layer.VERIFIER),
                ("aiopsRuleEvaluation", Layer.AIOPS),
            )
        )
        duration = (
            int((session.finished_at - session.created_at).total_seconds() * 1000) if session.finished_at else None
        )
        claim_verdicts: dict[str, int] = {}
        for check in (verifier or {}).get("claimChecks", []):
            claim_verdicts[check["verdict"]] = claim_verdicts.get(check["verdict"], 0) + 1
        return {
            "execution": {
                "status": session.status,
                "mode": session.mode,
                "createdAt": serializers.DateTimeField().to_representation(session.created_at),
                "finishedAt": serializers.DateTimeField().to_representation(session.finished_at)
                if session.finished_at
                else None,
                "durationMs": duration,
                "stepCount": len(trace.steps),
                "invocationCount": trace.invocation_page.total,
                "failedInvocationCount": trace.invocation_page.failed,
                "evaluationState": session.evaluation_state,
            },
            "evidence": {
                "rule": {
                    "evidenceScore": (rule or {}).get("evidenceScore", session.evidence_score),
                    "appliedRules": [f.get("rule") for f in (rule or {}).get("factors", []) if isinstance(f, dict)],
                },
                "verifier": {
                    "verdict": (verifier or {}).get("verdict") or session.verifier_verdict or None,
                    "groundednessScore": (verifier or {}).get("groundednessScore", session.groundedness_score),
                    "claimVerdicts": claim_verdicts,
                    "failureAttribution": session.failure_attribution or None,
                },
                "aiops": {
                    "verdict": (aiops or {}).get("verdict") or session.aiops_verdict or None,
                    "failedChecks": [c["check"] for c in (aiops or {}).get("checks", []) if not c["passed"]],
                },
            },
            "user": {
                "feedback": session.feedback or None,
                "feedbackHistory": FeedbackEventSerializer(trace.feedback_history, many=True).data,
                "case": TraceCaseSerializer(trace.case).data if trace.case else None,
                "badCase": TraceBadCaseSerializer(trace.bad_case).data if trace.bad_case else None,
            },
        }


def _read(trace: Trace) -> SelfEvaluation:
    """The session's layers, read once per trace (memoised on the session object)."""
    cached = getattr(trace.session, "_self_evaluation", None)
    if cached is None:
        cached = trace.session._self_evaluation = self_evaluation_read(trace.session.self_evaluation)
    return cached


def structured_layers(trace: Trace) -> dict[str, Any]:
    """The three layers in camelCase; a missing or unreadable layer is null. Memoised on the trace."""
    cached = getattr(trace.session, "_structured_layers", None)
    if cached is not None:
        return cached
    evaluation = _read(trace)
    rule, aiops = evaluation.rule, evaluation.aiops
    result = {
        "ruleEvaluation": {
            "evidenceScore": rule.evidence_score,
            "source": rule.source,
            "factors": layer_json(rule.factors),
        }
        if rule
        else None,
        "verifierEvaluation": _verifier(evaluation.verifier or VerifierEvaluation(), trace.claim_checks)
        if evaluation.verifier or trace.claim_checks
        else None,
        "aiopsRuleEvaluation": {"verdict": aiops.verdict, "checks": layer_json(aiops.checks)} if aiops else None,
        "invalidLayers": [{"layer": layer.name, "error": layer.error} for layer in evaluation.invalid],
        "raw": evaluation.container,
    }
    trace.session._structured_layers = result
    return result


def _verifier(layer: VerifierEvaluation, rows: list[ClaimCheck]) -> dict[str, Any]:
    gatekeeper = layer.gatekeeper_result
    if rows:
        claim_checks = [
            {
                "claimId": row.claim_id,
                "text": row.text,
                "critical": row.critical,
                "verdict": row.verdict,
                "judge": row.judge,
                "rationale": row.rationale,
                "rationaleCode": row.rationale_code,
                "rationaleParams": row.rationale_params,
                "pSupported": row.p_supported,
                "pContradicted": row.p_contradicted,
                "band": row.band or None,
                "decidedBy": row.decided_by or None,
                "reasons": layer_json(entries_read(row.reasons, JudgeReason) or []),
                "service": row.service,
                "facts": layer_json(entries_read(row.facts, FactCheck) or []),
                "bindings": layer_json(entries_read(row.bindings, GatekeeperBinding) or []),
            }
            for row in rows
        ]
    else:
        bindings = gatekeeper.bindings if gatekeeper else []
        claim_checks = [
            {
                "claimId": check.claim_id,
                "text": check.text,
                "critical": check.critical,
                "verdict": check.verdict,
                "judge": check.judge,
                "rationale": check.rationale,
                "rationaleCode": check.rationale_code,
                "rationaleParams": check.rationale_params,
                "pSupported": check.p_supported,
                "pContradicted": check.p_contradicted,
                "band": check.band,
                "decidedBy": check.decided_by,
                "reasons": layer_json(check.reasons),
                "service": "",
                "facts": layer_json([f for f in layer.facts_checked if f.claim_id == check.claim_id]),
                "bindings": layer_json([b for b in bindings if b.claim_id == check.claim_id]),
            }
            for check in layer.claim_checks
        ]
    return {
        "source": layer.source or None,
        "verdict": layer.verdict,
        "groundednessScore": layer.groundedness_score,
        "criticalFactCount": layer.critical_fact_count,
        "round": layer.round,
        "rationale": layer.rationale,
        "rationaleCode": layer.rationale_code,
        "rationaleParams": layer.rationale_params,
        "traceabilityVersion": layer.traceability_version,
        "claimChecks": claim_checks,
        "factsChecked": layer_json(layer.facts_checked),
        "gatekeeperBindings": layer_json(gatekeeper.bindings)
        if gatekeeper
        else [binding for check in claim_checks for binding in check["bindings"]],
        "gatekeeperSummary": layer_json(gatekeeper.summary) if gatekeeper else {},
        "executorOutputParseStatus": layer_json(layer.executor_output_parse_status or {}),
        "executorStructuredOutput": layer.executor_structured_output,
        "composerOutput": layer_json(layer.composer_output or {}),
        "toolTraceSummary": layer_json(layer.tool_trace_summary),
    }
