"""Reads of diagnosis data, already scoped to what the caller may see."""

from datetime import datetime, timedelta

from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404

from core.tenancy.access import Access
from core.tenancy.models import Project
from diagnosis.models import (
    ClaimCheck,
    DiagnosisSession,
    EvidenceRef,
    ToolInvocation,
)


def session_list(*, access: Access) -> QuerySet[DiagnosisSession]:
    return (
        DiagnosisSession.objects.visible_to(access)
        .select_related("project")
        .defer("answer", "alert", "active_alerts", "executor_output", "self_evaluation")
    )


SEARCH_DEFAULT_DAYS = 7
SEARCH_MAX_DAYS = 366
# A term shorter than a trigram ("证书") cannot use the trigram indexes: it scans the range's sessions.
SEARCH_SHORT_TERM_CHARS = 3
SEARCH_SHORT_MAX_DAYS = 31


def session_text_matches(term: str) -> Q:
    """The query or the answer contains `term`, case-insensitively (on PostgreSQL, what the trigram
    indexes of migration 0008 serve: `UPPER(col) LIKE UPPER('%term%')`)."""
    return Q(query__icontains=term) | Q(answer__icontains=term)


def session_text_search(
    *, sessions: QuerySet[DiagnosisSession], term: str, since: datetime | None, until: datetime | None, now: datetime
) -> QuerySet[DiagnosisSession]:
    """`sessions` whose query or answer contains `term` (case-insensitive), created in [since, until).

    The range bounds the work: on PostgreSQL a term of three characters or more is looked up in the
    trigram indexes (migration 0008) over at most SEARCH_MAX_DAYS; a shorter one ("证书") scans the
    range's sessions through the created_at index, over at most SEARCH_SHORT_MAX_DAYS. Without
    `since`, the range is the last SEARCH_DEFAULT_DAYS days before `until` (or `now`).
    """
    end = until or now
    longest = SEARCH_SHORT_MAX_DAYS if len(term) < SEARCH_SHORT_TERM_CHARS else SEARCH_MAX_DAYS
    floor = end - timedelta(days=longest)
    start = max(since, floor) if since is not None else end - timedelta(days=SEARCH_DEFAULT_DAYS)
    found = sessions.filter(session_text_matches(term), created_at__gte=start)
    return found.filter(created_at__lt=until) if until is not None else found


def session_has_claim_and_source(*, session: DiagnosisSession, claim_id: str, ref_id: str) -> bool:
    """Does the session have this claim (checked, or in its executor output) and this citable ref or call?"""
    if not claim_id or not ref_id:
        return False
    output = session.executor_output if isinstance(session.executor_output, dict) else {}
    claims = output.get("claims") if isinstance(output.get("claims"), list) else []
    has_claim = any(isinstance(claim, dict) and claim.get("claimId") == claim_id for claim in claims)
    if not has_claim and not ClaimCheck.objects.filter(session=session, claim_id=claim_id).exists():
        return False
    return (
        EvidenceRef.objects.filter(session=session, ref_id=ref_id).exists()
        or ToolInvocation.objects.filter(session=session, invocation_id=ref_id).exists()
    )


def session_list_for_export(
    *, project: Project | None = None, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[DiagnosisSession]:
    """Sessions created in [since, until), of one project or of all, oldest first, ties by pk.

    The order survives a round trip: importing the exported lines in order into an empty database
    and exporting again gives the same order.
    """
    sessions = DiagnosisSession.objects.all()
    if project is not None:
        sessions = sessions.filter(project=project)
    if since is not None:
        sessions = sessions.filter(created_at__gte=since)
    if until is not None:
        sessions = sessions.filter(created_at__lt=until)
    return sessions.order_by("created_at", "pk")


def session_get(
    *,
    access: Access,
    session_id: str,
    project_slug: str | None = None,
    queryset: QuerySet[DiagnosisSession] | None = None,
) -> DiagnosisSession:
    """The session with this external id that the caller may see, or 404.

    A machine client's key pins the project; staff may pass `project_slug` to choose between
    projects that use the same sessionId. Another project's session is a 404, never a 403.
    `queryset` chooses what is loaded (default: the session with its project).
    """
    if queryset is None:
        queryset = DiagnosisSession.objects.select_related("project")
    sessions = queryset.visible_to(access).filter(session_id=session_id)
    if project_slug:
        sessions = sessions.filter(project__slug=project_slug)
    found = list(sessions[:2])
    if len(found) != 1:
        raise Http404(
            f"Session {session_id!r} not found"
            if not found
            else f"Session {session_id!r} exists in several projects; pass project"
        )
    return found[0]


def session_with_children(*, access: Access, session_id: str, project_slug: str | None = None) -> DiagnosisSession:
    """`session_get` plus steps, invocations and their refs in a fixed number of queries."""
    session = session_get(access=access, session_id=session_id, project_slug=project_slug)
    invocations = ToolInvocation.objects.filter(session=session).prefetch_related(
        Prefetch("evidence_refs", queryset=EvidenceRef.objects.order_by("position"))
    )
    session._prefetched_objects_cache = {
        "steps": session.steps.all(),
        "invocations": invocations,
    }
    return session


def sessions_needing_review(*, access: Access, queryset: QuerySet | None = None) -> QuerySet[DiagnosisSession]:
    """The one definition of "needs review": the triage queue lists these, the dashboard counts them.

    `queryset`: sessions (or the triage queue's proxy) to narrow; default every session.
    """
    sessions = DiagnosisSession.objects.all() if queryset is None else queryset
    return sessions.visible_to(access).filter(needs_review=True)
