import django_filters

from core.api.filters import APIFilterSet, BlankAsNullChoiceFilter, BoundedIntegerFilter, UTCIsoDateTimeFilter
from diagnosis.models import (
    AiOpsVerdict,
    DiagnosisSession,
    EvaluationState,
    FailureAttribution,
    Feedback,
    SessionMode,
    SessionStatus,
    VerifierVerdict,
)


class SessionFilter(APIFilterSet):
    """Filters of `GET /api/sessions`; each one is backed by an index ending in created_at."""

    mode = django_filters.ChoiceFilter(choices=SessionMode.choices)
    status = django_filters.ChoiceFilter(choices=SessionStatus.choices)
    # null selects the unset value, as the answers show it (no feedback, not judged, not evaluated).
    feedback = BlankAsNullChoiceFilter(choices=Feedback.choices)
    verifierVerdict = BlankAsNullChoiceFilter(field_name="verifier_verdict", choices=VerifierVerdict.choices)
    aiopsVerdict = BlankAsNullChoiceFilter(field_name="aiops_verdict", choices=AiOpsVerdict.choices)
    evaluationState = django_filters.ChoiceFilter(field_name="evaluation_state", choices=EvaluationState.choices)
    failureAttribution = BlankAsNullChoiceFilter(field_name="failure_attribution", choices=FailureAttribution.choices)
    evidenceScoreMin = BoundedIntegerFilter(field_name="evidence_score", lookup_expr="gte", min_value=0, max_value=100)
    evidenceScoreMax = BoundedIntegerFilter(field_name="evidence_score", lookup_expr="lte", min_value=0, max_value=100)
    createdAfter = UTCIsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    createdBefore = UTCIsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    project = django_filters.CharFilter(field_name="project__slug")

    class Meta:
        model = DiagnosisSession
        fields: list[str] = []
