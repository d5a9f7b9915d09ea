"""Reads of the feedback app."""

from django.conf import settings
from django.db.models import OuterRef, QuerySet, Subquery

from cases.models import Case
from diagnosis.models import DiagnosisSession
from diagnosis.selectors import session_get
from feedback.models import FeedbackEvent
from selfeval_site.api.authentication import AccessScope

# What feedback_submit needs of the session; the big JSON columns stay in the database.
_FEEDBACK_SESSION_FIELDS = ("pk", "project_id", "session_id", "verifier_verdict", "feedback", "status")


def feedback_session_get(*, scope: AccessScope, session_id: str, project_slug: str | None = None) -> DiagnosisSession:
    """`diagnosis.selectors.session_get`, loading only what feedback needs.

    `existing_case_id` is the session's case id, if it had one when read.
    """
    return session_get(
        scope=scope,
        session_id=session_id,
        project_slug=project_slug,
        queryset=DiagnosisSession.objects.only(*_FEEDBACK_SESSION_FIELDS)
        # Read along in the same query: a repeated `useful` then needs no case lookup.
        .annotate(existing_case_id=Subquery(Case.objects.filter(session_id=OuterRef("pk")).values("pk")[:1])),
    )


def feedback_history(*, session: DiagnosisSession, limit: int | None = None) -> QuerySet[FeedbackEvent]:
    """The session's most recent feedback events, newest first."""
    limit = limit or settings.SELFEVAL_TRACE_FEEDBACK_HISTORY
    return (
        FeedbackEvent.objects.filter(session_id=session.pk)
        .select_related("user")
        .order_by("-created_at", "-id")[:limit]
    )
