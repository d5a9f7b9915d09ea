"""Reads of diagnosis data, already scoped to what the caller may see."""

import re
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import connections, models
from django.db.models import F, Func, Prefetch, Q, QuerySet
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


# Letters, digits and CJK ideographs: what the gram index of migration 0014 holds, one or two at a time.
_GRAM_TERM = re.compile(r"[0-9A-Za-z\u3400-\u9fff\uf900-\ufaff]{1,2}")
# A term shorter than a trigram that the gram index cannot hold either ("5%"): no index serves it,
# so it is looked for in this many days at most, the last ones of the chosen range.
SEARCH_UNINDEXED_DAYS = 31
SEARCH_TRIGRAM_CHARS = 3


def session_text_matches(term: str) -> Q:
    """The query or the answer contains `term`, case-insensitively (on PostgreSQL, what the trigram
    indexes of migration 0008 serve: `UPPER(col) LIKE UPPER('%term%')`)."""
    return Q(query__icontains=term) | Q(answer__icontains=term)


# A one- or two-character term in this share of the sessions or more is searched without the gram index.
COMMON_GRAM_SHARE = 0.05
SEARCH_GRAMS_INDEX = "session_search_grams"


def _common_gram(gram: str, connection) -> bool:
    """Is `gram` in COMMON_GRAM_SHARE of the sessions or more, by the statistics ANALYZE keeps of the
    gram index (its most common elements and their frequencies)? False when there are none."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats WHERE tablename = %s",
            [SEARCH_GRAMS_INDEX],
        )
        row = cursor.fetchone()
    if row is None or row[0] is None:
        return False
    frequencies = dict(zip(row[0], row[1], strict=False))
    return frequencies.get(gram, 0.0) >= COMMON_GRAM_SHARE


class SearchGrams(Func):
    """`selfeval_search_grams(query, answer)`: the expression the gram index of migration 0014 holds."""

    function = "selfeval_search_grams"
    output_field = ArrayField(models.TextField())

    def __init__(self):
        super().__init__(F("query"), F("answer"))


def session_text_search_floor(*, term: str, since: datetime | None, until: datetime | None, now: datetime):
    """The earliest creation time a search for `term` may reach: `since` (None for any date), unless no
    index serves the term (shorter than a trigram and not letters, digits or CJK), which is looked for
    in the last SEARCH_UNINDEXED_DAYS days of the range at most."""
    if len(term) >= SEARCH_TRIGRAM_CHARS or _GRAM_TERM.fullmatch(term):
        return since
    floor = (until or now) - timedelta(days=SEARCH_UNINDEXED_DAYS)
    return max(since, floor) if since is not None else floor


def session_text_search(
    *, sessions: QuerySet[DiagnosisSession], term: str, since: datetime | None, until: datetime | None, now: datetime
) -> QuerySet[DiagnosisSession]:
    """`sessions` whose query or answer contains `term` (case-insensitive), created in [since, until):
    every date when neither bound is given.

    On PostgreSQL every term a person types is answered from an index: three characters or more from
    the trigram indexes (migration 0008), one or two letters, digits or CJK ideographs ("证书", "慢",
    "db") from the gram index (migration 0014, asked alongside the LIKE, which stays the rule) unless
    the index's statistics say the term is in COMMON_GRAM_SHARE of the sessions or more: then the
    newest sessions hold a page of matches at once, and walking them by created_at (the LIKE alone)
    beats reading the term's whole posting list. Only a short term of other characters ("5%") has no
    index; `session_text_search_floor` bounds it.
    """
    found = sessions.filter(session_text_matches(term))
    connection = connections[sessions.db]
    if _GRAM_TERM.fullmatch(term) and connection.vendor == "postgresql" and not _common_gram(term.upper(), connection):
        # "*" marks a text too long to hold every gram: always a candidate, decided by the LIKE.
        found = found.alias(search_grams=SearchGrams()).filter(search_grams__overlap=[term.upper(), "*"])
    start = session_text_search_floor(term=term, since=since, until=until, now=now)
    if start is not None:
        found = found.filter(created_at__gte=start)
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
    `queryset` chooses what is loaded (default: the session with its project; a `values()` queryset
    gives the row as a dict, as the trace API reads its version).
    """
    if queryset is None:
        queryset = DiagnosisSession.objects.select_related("project")
    found = sessions_matching(queryset, access=access, session_id=session_id, project_slug=project_slug)
    return session_found(list(found), session_id=session_id)


def sessions_matching(
    queryset: QuerySet[DiagnosisSession], *, access: Access, session_id: str, project_slug: str | None = None
) -> QuerySet[DiagnosisSession]:
    """The (at most two) sessions of `queryset` that `session_get` tells apart."""
    sessions = queryset.visible_to(access).filter(session_id=session_id)
    if project_slug:
        sessions = sessions.filter(project__slug=project_slug)
    return sessions[:2]


def session_found(found: list[DiagnosisSession], *, session_id: str) -> DiagnosisSession:
    """The one session of `found` (`sessions_matching`'s), or 404 for none or several."""
    if len(found) != 1:
        raise Http404(
            f"Session {session_id!r} not found"
            if not found
            else f"Session {session_id!r} exists in several projects; pass project"
        )
    return found[0]


def session_with_children(*, access: Access, session_id: str, project_slug: str | None = None) -> DiagnosisSession:
    """`session_get` plus steps, invocations and their refs in a fixed number of queries."""
    return session_children_loaded(session_get(access=access, session_id=session_id, project_slug=project_slug))


def session_children_loaded(session: DiagnosisSession) -> DiagnosisSession:
    """`session` (from `session_get`) with its steps, invocations and their refs, three queries whatever
    its size: the session read loads them only once the session's version says it must answer a body."""
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


def conversation_turns(*, project_id: int, conversation_id: str) -> QuerySet[DiagnosisSession]:
    """The turns of a conversation (same project and conversation id), oldest first: the first
    SELFEVAL_TRACE_CONVERSATION_TURNS of them, in one query. The trace API and the inspector choose
    the columns (`values`, `only`)."""
    return DiagnosisSession.objects.filter(project_id=project_id, conversation_id=conversation_id).order_by(
        "created_at", "id"
    )[: settings.SELFEVAL_TRACE_CONVERSATION_TURNS]
