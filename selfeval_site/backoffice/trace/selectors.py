"""The trace of one session (seed section 9): everything read in a fixed number of queries.

Eight queries whatever the number of steps, invocations or refs: session, steps, invocations,
their refs, the latest round's claim checks, recent feedback events, the case, the bad case.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import models

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, Case
from diagnosis.models import ClaimCheck, DiagnosisSession, DiagnosisStep, EvidenceRef, ToolInvocation
from diagnosis.selectors import session_get
from feedback.models import FeedbackEvent
from selfeval_site.tenancy.access import Access


@dataclass(frozen=True, slots=True)
class Trace:
    session: DiagnosisSession
    steps: list[DiagnosisStep]
    invocations: list[ToolInvocation]  # evidence_refs prefetched
    claim_checks: list[ClaimCheck]  # the latest verifier round only
    feedback_history: list[FeedbackEvent]  # newest first, at most SELFEVAL_TRACE_FEEDBACK_HISTORY
    case: Case | None
    bad_case: BadCase | None  # the open one, else the most recent


def trace_get(*, access: Access, session_id: str, project_slug: str | None = None) -> Trace:
    """The caller's session with all it needs for the trace view, or 404 (also for another project's)."""
    session = session_get(access=access, session_id=session_id, project_slug=project_slug)
    invocations = list(
        ToolInvocation.objects.filter(session=session)
        .order_by("position")
        .prefetch_related(models.Prefetch("evidence_refs", queryset=EvidenceRef.objects.order_by("position")))
    )
    latest_round = ClaimCheck.objects.filter(session=session).order_by("-round").values("round")[:1]
    claim_checks = list(ClaimCheck.objects.filter(session=session, round=models.Subquery(latest_round)).order_by("id"))
    history = list(
        FeedbackEvent.objects.filter(session=session)
        .select_related("user")
        .order_by("-created_at", "-id")[: settings.SELFEVAL_TRACE_FEEDBACK_HISTORY]
    )
    bad_case = (
        BadCase.objects.filter(session=session)
        .select_related("assignee")
        .order_by(
            models.Case(models.When(status__in=OPEN_BAD_CASE_STATUSES, then=0), default=1),
            "-created_at",
        )
        .first()
    )
    return Trace(
        session=session,
        steps=list(DiagnosisStep.objects.filter(session=session).order_by("index")),
        invocations=invocations,
        claim_checks=claim_checks,
        feedback_history=history,
        case=Case.objects.filter(session=session).first(),
        bad_case=bad_case,
    )
