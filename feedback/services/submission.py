"""Recording user feedback (seed document 000's FeedbackService) and what each value sets in motion."""

from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import OuterRef, QuerySet, Subquery

from cases.models import BadCase, BadCaseSource, Case
from cases.services import bad_case_open_for_session, case_create_from_session
from core.api.idempotency import (
    StoredAnswer,
    api_key_client,
    idempotency_answer_store,
    idempotency_claim,
    request_fingerprint,
)
from core.queries import CompiledInsert, CompiledQuery
from core.tenancy.access import Access
from core.tenancy.models import ProjectAPIKey
from diagnosis.models import DiagnosisSession, Feedback
from diagnosis.selectors import session_found, sessions_matching
from diagnosis.services.trace_version import TRACE_CHANGED
from diagnosis.signals import figures_changed
from feedback.models import EndUserVote, FeedbackClient, FeedbackEvent
from feedback.signals import feedback_recorded

RECORDED_MESSAGE = "反馈已记录"  # seed document 000's answer to a recorded vote


@dataclass(frozen=True, slots=True)
class FeedbackSubmitter:
    """Who votes: what they may see, and what their events record. Resolved once per request.

    A feedback token binds the submitter to one session (`session_pk` / `session_id`) and one end
    user; an API key or a staff user may vote on any session they can see.
    """

    access: Access
    client: str  # a FeedbackClient value
    api_key: ProjectAPIKey | None = None
    user: AbstractBaseUser | None = None
    end_user_id: str = ""
    session_pk: int | None = None
    session_id: str = ""

    @property
    def identity(self) -> str:
        """The client, for what is kept per client (idempotency keys): "" for none."""
        if self.api_key is not None:
            return api_key_client(self.api_key)
        if self.end_user_id:
            return f"enduser:{self.access.project_id}/{self.end_user_id}"
        if self.user is not None and self.user.is_authenticated:
            return f"user:{self.user.pk}"
        return ""


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    event: FeedbackEvent | None  # None when nothing was written (a repeated end-user vote, a replay)
    case_id: UUID | None = None  # the session's case after `useful`, else None
    case: Case | None = None  # set only when this vote created the case
    bad_case: BadCase | None = None
    replayed: StoredAnswer | None = None  # the answer stored under this request's Idempotency-Key

    @property
    def answer(self) -> StoredAnswer:
        """Seed document 000's answer `{success, message, caseId}`; a replay answers what was stored."""
        if self.replayed is not None:
            return self.replayed
        case_id = str(self.case_id) if self.case_id is not None else None
        return StoredAnswer(status=200, body={"success": True, "message": RECORDED_MESSAGE, "caseId": case_id})


def _vote_sessions(*, project_id: int | None, session_id: str, project_slug: str | None) -> QuerySet[DiagnosisSession]:
    """What a vote reads of the session (the big JSON columns stay in the database), with the id of
    its case: among the sessions of `project_id` (None: of every project). No ORDER BY: the vote only
    tells one matching row from several."""
    sessions = (
        DiagnosisSession.objects.only(
            "pk", "project_id", "session_id", "created_at", "verifier_verdict", "feedback", "status"
        )
        .annotate(existing_case_id=Subquery(Case.objects.filter(session_id=OuterRef("pk")).order_by().values("pk")[:1]))
        .order_by()
    )
    access = Access.to_project(project_id) if project_id is not None else Access.to_everything()
    return sessions_matching(sessions, access=access, session_id=session_id, project_slug=project_slug)


# Built and compiled once: building and compiling the lookup and the event's INSERT cost half of a
# vote's CPU. The lookup is the UPDATE that moves the session's trace version (every event shows in
# the trace, as its feedback history): it takes the session's row lock and reads the session in the
# same statement, so a vote is BEGIN, this, the event's INSERT and COMMIT.
_VOTE_SESSION_QUERY = CompiledQuery(_vote_sessions, update=TRACE_CHANGED)
_EVENT_INSERT = CompiledInsert(FeedbackEvent)


def feedback_submit(
    *,
    submitter: FeedbackSubmitter,
    session_id: str,
    value: str,
    comment: str = "",
    reviewer: str = "",
    project_slug: str | None = None,
    idempotency_key: str = "",
) -> FeedbackResult:
    """Record one vote on the session `session_id` and act on it (seed document 000, section 7), in one transaction.

    The session is found among those `submitter` may see (Http404 otherwise; `project_slug` picks
    between projects that share a sessionId) and read under its row lock, taken by the UPDATE that
    moves its trace version, so concurrent votes on one session run one after another:
    `session.feedback` always ends as the latest event's value, and each vote sees the case or bad
    case the previous one made. Every vote becomes a FeedbackEvent and sets `session.feedback` and
    moves the session's trace version; nothing else of the session changes (status in particular).
    `useful` creates or reuses the session's case; `not_useful` opens or adds to the session's bad
    case. An end user (feedback token) has one EndUserVote per session: a new value replaces it, and
    repeating the same value writes no event and leaves `session.feedback` (a replayed token cannot
    pile up events or bad-case reports; its trace version still moves, which costs a re-render only).
    With an `idempotency_key` (the client's Idempotency-Key header), the key is claimed first and
    the answer stored with the vote, in the same transaction: repeating the request returns
    `replayed` (the stored answer) and writes nothing; the key with other arguments is an
    ApplicationError (422). See core.api.idempotency.
    Raises PermissionDenied when a token's submitter names another session.
    """
    if value not in Feedback.values:
        raise ValueError(f"unknown feedback value {value!r}")
    if submitter.client not in FeedbackClient.values:
        raise ValueError(f"unknown feedback client {submitter.client!r}")
    if submitter.session_pk is not None and session_id != submitter.session_id:
        raise PermissionDenied("This feedback token is bound to another session.")
    with transaction.atomic():
        claimed = None
        if idempotency_key:
            fingerprint = request_fingerprint("feedback", session_id, value, comment, reviewer, project_slug)
            claimed = idempotency_claim(client=submitter.identity, key=idempotency_key, fingerprint=fingerprint)
            if isinstance(claimed, StoredAnswer):
                return FeedbackResult(event=None, replayed=claimed)
        result = _vote(
            submitter=submitter,
            session_id=session_id,
            value=value,
            comment=comment,
            reviewer=reviewer,
            project_slug=project_slug,
        )
        if claimed is not None:
            idempotency_answer_store(record=claimed, answer=result.answer)
    return result


def _vote(
    *, submitter: FeedbackSubmitter, session_id: str, value: str, comment: str, reviewer: str, project_slug: str | None
) -> FeedbackResult:
    """The vote itself; call inside feedback_submit's transaction."""
    access = submitter.access
    found = (
        []
        if access.sees_nothing
        else _VOTE_SESSION_QUERY.fetch(
            project_id=access.project_id, session_id=session_id, project_slug=project_slug or None
        )
    )
    session = session_found(found, session_id=session_id)
    if submitter.session_pk is not None and session.pk != submitter.session_pk:
        raise PermissionDenied("This feedback token is bound to another session.")
    previous_vote = _end_user_vote_replace(session=session, end_user_id=submitter.end_user_id, value=value)
    if previous_vote == value:
        return FeedbackResult(event=None, case_id=session.existing_case_id if value == Feedback.USEFUL else None)
    if session.feedback != value:
        DiagnosisSession.objects.filter(pk=session.pk).update(feedback=value)
        session.feedback = value
        figures_changed.send(sender=DiagnosisSession, moments=[(session.project_id, session.created_at)])
    event = _EVENT_INSERT.create(
        session_id=session.pk,
        value=value,
        comment=comment,
        reviewer=reviewer,
        client=submitter.client,
        api_key=submitter.api_key,
        user=submitter.user if submitter.user is not None and submitter.user.is_authenticated else None,
        end_user_id=submitter.end_user_id,
    )
    feedback_recorded.send(sender=FeedbackEvent, session=session, value=value)
    if value == Feedback.USEFUL:
        if session.existing_case_id is not None:
            return FeedbackResult(event=event, case_id=session.existing_case_id)
        case = case_create_from_session(session=session)
        return FeedbackResult(event=event, case_id=case.pk, case=case)
    bad_case = bad_case_open_for_session(session=session, source=BadCaseSource.FEEDBACK, from_feedback=True)
    return FeedbackResult(event=event, bad_case=bad_case)


def _end_user_vote_replace(*, session: DiagnosisSession, end_user_id: str, value: str) -> str | None:
    """Set the end user's vote; return the vote it replaced. Call under the session's row lock."""
    if not end_user_id:
        return None
    vote = EndUserVote.objects.filter(session_id=session.pk, end_user_id=end_user_id).first()
    if vote is None:
        EndUserVote.objects.create(session_id=session.pk, end_user_id=end_user_id, value=value)
        return None
    if vote.value != value:
        EndUserVote.objects.filter(pk=vote.pk).update(value=value)
    return vote.value
