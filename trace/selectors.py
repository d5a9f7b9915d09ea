"""The trace of one session (seed document 000, section 9), read as plain values.

`trace_head_get` is what every GET pays: the session's pk, trace version and project, read in one
query among the sessions the caller may see (and, for a turn of a conversation, one more for the
turns, whose versions are part of what the trace shows). `trace_get` reads the rest only when no
cached body of that version exists: the session, steps, one page of invocations, their refs, the
latest round's claim checks, recent feedback events, the case and the bad case, one query each
whatever the session's size, as rows of values (no model objects). Ref contents are cut to a
preview in the database.
"""

from dataclasses import dataclass
from typing import Any

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

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TraceHead:
    """What names one version of a session's trace."""

    session_pk: int
    session_id: str
    version: int
    project_slug: str
    conversation_id: str
    turns: list[Row]  # the conversation's turns as the trace lists them, with their versions; [] for none


@dataclass(frozen=True, slots=True)
class InvocationPage:
    offset: int
    limit: int
    total: int  # every invocation of the session
    failed: int  # every failed one


@dataclass(frozen=True, slots=True)
class Trace:
    head: TraceHead
    session: Row
    steps: list[Row]
    invocations: list[Row]  # one page, each with its `refs` (content previews)
    invocation_page: InvocationPage
    claim_checks: list[Row]  # the latest verifier round only
    feedback_history: list[Row]  # newest first, at most SELFEVAL_TRACE_FEEDBACK_HISTORY
    case: Row | None
    bad_case: Row | None  # the open one, else the most recent


def _count(**conditions) -> models.Subquery:
    rows = ToolInvocation.objects.filter(session=models.OuterRef("pk"), **conditions).order_by()
    return models.Subquery(rows.values("session").annotate(n=models.Count("pk")).values("n")[:1])


# The trace's querysets, built once at import, as the vote builds its own: building them (the
# values, orderings and subqueries resolved) was a tenth of a cached GET and a sixth of a rendered
# one. Each read narrows a clone of one to its session.
_HEADS = DiagnosisSession.objects.order_by().values(
    "pk", "session_id", "trace_version", "project_id", "project__slug", "conversation_id"
)
_TURN_COLUMNS = ("pk", "trace_version", "session_id", "created_at", "status", "query", "feedback")
_SESSIONS = (
    DiagnosisSession.objects.order_by()
    .values(
        "mode",
        "language",
        "query",
        "answer",
        "status",
        "error",
        "alert",
        "active_alerts",
        "executor_output",
        "feedback",
        "created_at",
        "finished_at",
        "self_evaluation",
        "evidence_score",
        "verifier_verdict",
        "groundedness_score",
        "aiops_verdict",
        "failure_attribution",
        "evaluation_state",
        "evaluation_error",
        "evaluated_at",
    )  # fmt: skip
    .annotate(invocation_count=_count(), failed_invocation_count=_count(status=InvocationStatus.FAILED))
)
_STEPS = DiagnosisStep.objects.order_by("index").values("index", "name", "status", "detail")
_INVOCATIONS = ToolInvocation.objects.order_by("position").values(
    "pk", "position", "invocation_id", "step_index", "tool_name", "status", "arguments", "output", "error",
    "latency_ms", "match_level",
)  # fmt: skip
_REFS = EvidenceRef.objects.order_by("invocation_id", "position").values(
    "invocation_id", "position", "ref_id", "source", "content_sha256"
)
_LATEST_ROUND_CLAIM_CHECKS = (
    ClaimCheck.objects.filter(
        round=models.Subquery(
            ClaimCheck.objects.filter(session_id=models.OuterRef("session_id")).order_by("-round").values("round")[:1]
        )
    )
    .order_by("id")
    .values(
        "claim_id",
        "text",
        "critical",
        "verdict",
        "judge",
        "rationale",
        "rationale_code",
        "rationale_params",
        "p_supported",
        "p_contradicted",
        "band",
        "decided_by",
        "reasons",
        "service",
        "facts",
        "bindings",
    )  # fmt: skip
)
_FEEDBACK_EVENTS = FeedbackEvent.objects.order_by("-created_at", "-id").values(
    "value", "comment", "reviewer", "client", "end_user_id", "user__username", "created_at"
)
_CASES = Case.objects.order_by().values(
    "pk", "status", "source_type", "fault_category", "title", "error_code", "service", "reviewed_at", "created_at",
)  # fmt: skip
# The open one first, else the most recent.
_BAD_CASES = BadCase.objects.order_by(
    models.Case(models.When(status__in=OPEN_BAD_CASE_STATUSES, then=0), default=1), "-created_at"
).values(
    "id", "status", "source", "category", "assignee__username", "verifier_verdict", "feedback_count", "created_at",
    "closed_at",
)  # fmt: skip


def trace_head_get(*, access: Access, session_id: str, project_slug: str | None = None) -> TraceHead:
    """The version of the caller's session's trace, or 404 (also for another project's session)."""
    row = session_get(access=access, session_id=session_id, project_slug=project_slug, queryset=_HEADS)
    conversation_id = row["conversation_id"]
    turns = (
        list(conversation_turns(project_id=row["project_id"], conversation_id=conversation_id).values(*_TURN_COLUMNS))
        if conversation_id
        else []
    )
    return TraceHead(
        session_pk=row["pk"],
        session_id=row["session_id"],
        version=row["trace_version"],
        project_slug=row["project__slug"],
        conversation_id=conversation_id,
        turns=turns,
    )


def trace_get(*, head: TraceHead, invocation_offset: int = 0, invocation_limit: int | None = None) -> Trace:
    """Everything the trace of `head`'s session shows; read after `head`, so it is at least that version.

    Invocations come `invocation_limit` at a time (default SELFEVAL_TRACE_INVOCATIONS) from
    `invocation_offset`; each ref carries `content_preview` (SELFEVAL_TRACE_PREVIEW_CHARS) and
    `content_chars` instead of its content.
    """
    pk = head.session_pk
    limit = invocation_limit or settings.SELFEVAL_TRACE_INVOCATIONS
    session = _SESSIONS.filter(pk=pk).get()
    invocations = list(_INVOCATIONS.filter(session_id=pk)[invocation_offset : invocation_offset + limit])
    refs: dict[int, list[Row]] = {invocation["pk"]: [] for invocation in invocations}
    if refs:
        previews = _REFS.filter(invocation_id__in=list(refs)).annotate(
            content_chars=Length("content"), content_preview=Left("content", settings.SELFEVAL_TRACE_PREVIEW_CHARS)
        )
        for ref in previews:
            refs[ref["invocation_id"]].append(ref)
    for invocation in invocations:
        invocation["refs"] = refs[invocation["pk"]]
    return Trace(
        head=head,
        session=session,
        steps=list(_STEPS.filter(session_id=pk)),
        invocations=invocations,
        invocation_page=InvocationPage(
            offset=invocation_offset,
            limit=limit,
            total=session["invocation_count"] or 0,
            failed=session["failed_invocation_count"] or 0,
        ),
        claim_checks=list(_LATEST_ROUND_CLAIM_CHECKS.filter(session_id=pk)),
        feedback_history=list(_FEEDBACK_EVENTS.filter(session_id=pk)[: settings.SELFEVAL_TRACE_FEEDBACK_HISTORY]),
        case=next(iter(_CASES.filter(session_id=pk)[:1]), None),
        bad_case=next(iter(_BAD_CASES.filter(session_id=pk)[:1]), None),
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
