"""The trace of one session (seed document 000, section 9): everything read in a fixed number of queries.

Eight queries (nine for a turn of a conversation) whatever the number of steps, invocations or refs: session (with its invocation
counts), steps, one page of invocations, their refs, the latest round's claim checks, recent
feedback events, the case, the bad case. Ref contents are cut to a preview in the database.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import models
from django.db.models.functions import Left, Length
from django.shortcuts import get_object_or_404

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, Case
from core.tenancy.access import Access
from diagnosis.models import (
    ClaimCheck,
    DiagnosisSession,
    DiagnosisStep,
    EvidenceRef,
    InvocationStatus,
    ToolInvocation,
)
from diagnosis.selectors import conversation_turns, session_get
from feedback.models import FeedbackEvent


@dataclass(frozen=True, slots=True)
class InvocationPage:
    offset: int
    limit: int
    total: int  # every invocation of the session
    failed: int  # every failed one


@dataclass(frozen=True, slots=True)
class Trace:
    session: DiagnosisSession
    steps: list[DiagnosisStep]
    invocations: list[ToolInvocation]  # one page; evidence_refs prefetched with content previews
    invocation_page: InvocationPage
    claim_checks: list[ClaimCheck]  # the latest verifier round only
    feedback_history: list[FeedbackEvent]  # newest first, at most SELFEVAL_TRACE_FEEDBACK_HISTORY
    case: Case | None
    bad_case: BadCase | None  # the open one, else the most recent
    conversation: list[DiagnosisSession]  # the turns of its conversation in order, itself included; [] for none


def _count(**conditions) -> models.Subquery:
    rows = ToolInvocation.objects.filter(session=models.OuterRef("pk"), **conditions).order_by()
    return models.Subquery(rows.values("session").annotate(n=models.Count("pk")).values("n")[:1])


def trace_get(
    *,
    access: Access,
    session_id: str,
    project_slug: str | None = None,
    invocation_offset: int = 0,
    invocation_limit: int | None = None,
) -> Trace:
    """The caller's session with all it needs for the trace view, or 404 (also for another project's).

    Invocations come `invocation_limit` at a time (default SELFEVAL_TRACE_INVOCATIONS) from
    `invocation_offset`; each ref carries `content_preview` (SELFEVAL_TRACE_PREVIEW_CHARS) and
    `content_chars` instead of its content.
    """
    limit = invocation_limit or settings.SELFEVAL_TRACE_INVOCATIONS
    session = session_get(
        access=access,
        session_id=session_id,
        project_slug=project_slug,
        queryset=DiagnosisSession.objects.select_related("project").annotate(
            invocation_count=_count(), failed_invocation_count=_count(status=InvocationStatus.FAILED)
        ),
    )
    refs = (
        EvidenceRef.objects.order_by("position")
        .defer("content")
        .annotate(
            content_chars=Length("content"), content_preview=Left("content", settings.SELFEVAL_TRACE_PREVIEW_CHARS)
        )
    )
    invocations = list(
        ToolInvocation.objects.filter(session=session)
        .order_by("position")
        .prefetch_related(models.Prefetch("evidence_refs", queryset=refs))[
            invocation_offset : invocation_offset + limit
        ]
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
        invocation_page=InvocationPage(
            offset=invocation_offset,
            limit=limit,
            total=session.invocation_count or 0,
            failed=session.failed_invocation_count or 0,
        ),
        claim_checks=claim_checks,
        feedback_history=history,
        case=Case.objects.filter(session=session).first(),
        bad_case=bad_case,
        conversation=conversation_turns(session=session),
    )


def _session_pk(*, access: Access, session_id: str, project_slug: str | None) -> int:
    return session_get(
        access=access, session_id=session_id, project_slug=project_slug, queryset=DiagnosisSession.objects.only("pk")
    ).pk


def trace_invocation_get(
    *, access: Access, session_id: str, position: int, project_slug: str | None = None
) -> ToolInvocation:
    """One invocation of the caller's session by its position, with its whole output; or 404."""
    session_pk = _session_pk(access=access, session_id=session_id, project_slug=project_slug)
    return get_object_or_404(
        ToolInvocation.objects.only("invocation_id", "output"), session_id=session_pk, position=position
    )


def trace_ref_get(
    *, access: Access, session_id: str, position: int, ref_position: int, project_slug: str | None = None
) -> EvidenceRef:
    """One ref of one invocation of the caller's session, by positions, with its whole content; or 404."""
    session_pk = _session_pk(access=access, session_id=session_id, project_slug=project_slug)
    return get_object_or_404(EvidenceRef, session_id=session_pk, invocation__position=position, position=ref_position)
