"""Reads of diagnosis data, already scoped to what the caller may see."""

from datetime import datetime

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from diagnosis.models import DiagnosisSession, EvidenceRef, ToolInvocation
from selfeval_site.tenancy.access import Access
from selfeval_site.tenancy.models import Project


def session_list(*, access: Access) -> QuerySet[DiagnosisSession]:
    return (
        DiagnosisSession.objects.visible_to(access)
        .select_related("project")
        .defer("answer", "alert", "active_alerts", "executor_output", "self_evaluation")
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
