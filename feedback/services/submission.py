"""Recording user feedback (the seed's FeedbackService) and what each value sets in motion."""

from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction

from cases.models import BadCase, BadCaseSource, Case
from cases.services import bad_case_open_for_session, case_create_from_session
from diagnosis.models import DiagnosisSession, Feedback, ProjectAPIKey
from feedback.models import EndUserVote, FeedbackClient, FeedbackEvent
from selfeval_site.db import fetchone_prepared


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    event: FeedbackEvent
    case_id: UUID | None = None  # the session's case after `useful`, else None
    case: Case | None = None  # loaded only when this call had to look the case up or create it
    bad_case: BadCase | None = None


def feedback_submit(
    *,
    session: DiagnosisSession,
    value: str,
    client: str,
    comment: str = "",
    reviewer: str = "",
    api_key: ProjectAPIKey | None = None,
    user: AbstractBaseUser | None = None,
    end_user_id: str = "",
) -> FeedbackResult:
    """Record one submission and act on it (seed section 7), all in one transaction.

    Every submission becomes a FeedbackEvent; `session.feedback` becomes `value` and nothing
    else of the session changes (status in particular). `useful` creates or reuses the session's
    case; `not_useful` opens or adds to the session's bad case. With `end_user_id` (a feedback
    token), the end user's EndUserVote is replaced; a repeated not_useful vote of the same end
    user does not count twice on the bad case.

    `session` needs pk, project_id, session_id and verifier_verdict loaded; when it also carries
    `existing_case_id` (feedback_session_get reads it along), a known case is not looked up again.
    """
    if value not in Feedback.values:
        raise ValueError(f"unknown feedback value {value!r}")
    if client not in FeedbackClient.values:
        raise ValueError(f"unknown feedback client {client!r}")
    case = bad_case = None
    known_case_id = None
    with transaction.atomic():
        # First statement on purpose: it takes the session's row lock, so concurrent submissions
        # for one session run one after another and each sees the case the previous one made.
        DiagnosisSession.objects.filter(pk=session.pk).update(feedback=value)
        event = FeedbackEvent.objects.create(
            session_id=session.pk,
            value=value,
            comment=comment,
            reviewer=reviewer,
            client=client,
            api_key=api_key,
            user=user if user is not None and user.is_authenticated else None,
            end_user_id=end_user_id,
        )
        previous_vote = _end_user_vote_replace(session=session, end_user_id=end_user_id, value=value)
        if value == Feedback.USEFUL:
            known_case_id = getattr(session, "existing_case_id", None)
            if known_case_id is None:
                case = case_create_from_session(session=session)
        else:
            bad_case = bad_case_open_for_session(
                session=session,
                source=BadCaseSource.FEEDBACK,
                from_feedback=previous_vote != Feedback.NOT_USEFUL,
            )
    session.feedback = value
    case_id = case.pk if case is not None else known_case_id
    return FeedbackResult(event=event, case_id=case_id, case=case, bad_case=bad_case)


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


# One statement, so it is atomic without BEGIN / COMMIT: find the session and its case and take
# the session's row lock (as feedback_submit's first UPDATE does), set the session's feedback
# only when it changes, and insert the event. A repeated vote thus leaves the session row and
# its many indexes alone while still queueing behind concurrent votes on the lock.
# The change test reads `target.feedback`, the row as locked (after waiting, FOR UPDATE returns
# the newest version), never the statement's snapshot of the row, which may predate a vote
# committed while this one waited: so `feedback` always ends as the latest event's value.
# Rows only come back when the session exists in the project AND already has its case;
# otherwise nothing is written and the caller takes feedback_submit. created_at is read from the
# clock when the row is inserted, after the lock is held (a timestamp taken in Python before the
# statement could order the event before a vote that took the lock earlier), the same moment
# feedback_submit's auto_now_add takes it.
_SESSIONS, _CASES, _EVENTS = DiagnosisSession._meta.db_table, Case._meta.db_table, FeedbackEvent._meta.db_table
_USEFUL_KNOWN_CASE_SQL = f"""
WITH target AS (
    SELECT s.id AS session_pk, s.feedback, c.id AS case_id
    FROM {_SESSIONS} s JOIN {_CASES} c ON c.session_id = s.id
    WHERE s.project_id = %s AND s.session_id = %s
    FOR UPDATE OF s
), updated AS (
    UPDATE {_SESSIONS} s SET feedback = %s FROM target
    WHERE s.id = target.session_pk AND target.feedback IS DISTINCT FROM %s
), event AS (
    INSERT INTO {_EVENTS}
        (session_id, value, comment, reviewer, client, api_key_id, user_id, end_user_id, created_at)
    SELECT session_pk, %s, %s, %s, %s, %s, NULL, '', clock_timestamp() FROM target
)
SELECT case_id FROM target
"""  # noqa: S608 (table names from model metadata; every value is a parameter)


def feedback_submit_useful_known_case(
    *, project_id: int, session_id: str, api_key: ProjectAPIKey, comment: str = "", reviewer: str = ""
) -> UUID | None:
    """`useful` from a project API key for a session that already has its case, in one statement.

    The steady state of the feedback endpoint (PostgreSQL only: data-modifying CTEs). Same effect
    as feedback_submit for that case: one FeedbackEvent, `session.feedback` set in the same
    atomic statement under the session's row lock, nothing else of the session touched, and the
    existing case's id returned. Returns None, having written nothing, when the fast path does not
    apply (another database, unknown session, or no case yet): call feedback_submit then.
    """
    if connection.vendor != "postgresql":
        return None
    params = [
        project_id,
        session_id,
        Feedback.USEFUL,
        Feedback.USEFUL,
        Feedback.USEFUL,
        comment,
        reviewer,
        FeedbackClient.API_KEY,
        api_key.pk,
    ]
    row = fetchone_prepared(_USEFUL_KNOWN_CASE_SQL, params)
    return row[0] if row is not None else None
