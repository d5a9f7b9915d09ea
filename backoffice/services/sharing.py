"""Sharing the triage work: reviewers take sessions (assignments) and see who has one open (locks).

Taking and releasing need `diagnosis.review_session`; taking or releasing another reviewer's
session needs `backoffice.reassign_triageassignment` too. A lock is soft: it is shown to the
others ("Alice is reviewing this"), never enforced, and expires `REVIEW_LOCK_SECONDS` after the
holder's page last refreshed it (`HEARTBEAT_SECONDS`).
"""

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F, OuterRef, QuerySet, Subquery
from django.utils import timezone

from backoffice.models import ReviewLock, TriageAssignment
from diagnosis.models import DiagnosisSession

REVIEW_PERMISSION = "diagnosis.review_session"
REASSIGN_PERMISSION = "backoffice.reassign_triageassignment"
REVIEW_LOCK_SECONDS = 120
HEARTBEAT_SECONDS = 30


@dataclass(frozen=True)
class TakeResult:
    taken: int  # now assigned to the user (including those they had already)
    held_by_others: int  # left to their assignees


def _require_review(user: AbstractBaseUser) -> None:
    if not user.has_perm(REVIEW_PERMISSION):
        raise PermissionDenied("You may not take sessions for review.")


def triage_assignments_take(*, session_pks: list[int], user: AbstractBaseUser) -> TakeResult:
    """Assign the sessions to `user`; a session another reviewer took stays theirs unless `user`
    may reassign. Concurrent takes of one session: the first one wins."""
    _require_review(user)
    pks = sorted(set(session_pks))
    now = timezone.now()
    may_reassign = user.has_perm(REASSIGN_PERMISSION)
    with transaction.atomic():
        current = dict(
            TriageAssignment.objects.select_for_update()
            .filter(session_id__in=pks)
            .values_list("session_id", "assignee_id")
        )
        others = [pk for pk, assignee in current.items() if assignee != user.pk]
        if may_reassign and others:
            TriageAssignment.objects.filter(session_id__in=others).update(assignee=user, assigned_at=now)
        TriageAssignment.objects.bulk_create(
            [TriageAssignment(session_id=pk, assignee=user, assigned_at=now) for pk in pks if pk not in current],
            ignore_conflicts=True,
        )
        taken = TriageAssignment.objects.filter(session_id__in=pks, assignee=user).count()
    return TakeResult(taken=taken, held_by_others=len(pks) - taken)


# A concurrent "take next" may win some of the sessions this one picked: pick again, this many times.
_TAKE_NEXT_ROUNDS = 3


def triage_assignments_take_next(*, queue: QuerySet[DiagnosisSession], user: AbstractBaseUser, count: int) -> list[int]:
    """Assign to `user` the `count` oldest sessions of `queue` (the triage queue as the reviewer
    filtered it) that nobody has taken; returns their pks, oldest first.

    Two reviewers taking at once never share a session: an insert that meets another's assignment
    is dropped, and the sessions it missed are picked again from what is left.
    """
    _require_review(user)
    taken: list[int] = []
    for _round in range(_TAKE_NEXT_ROUNDS):
        wanted = count - len(taken)
        if wanted <= 0:
            break
        free = queue.filter(triage_assignment__isnull=True).exclude(pk__in=taken).order_by("created_at", "id")
        pks = list(free.values_list("pk", flat=True)[:wanted])
        if not pks:
            break
        now = timezone.now()
        TriageAssignment.objects.bulk_create(
            [TriageAssignment(session_id=pk, assignee=user, assigned_at=now) for pk in pks], ignore_conflicts=True
        )
        mine = set(
            TriageAssignment.objects.filter(session_id__in=pks, assignee=user).values_list("session_id", flat=True)
        )
        taken += [pk for pk in pks if pk in mine]
    return taken


def triage_assignment_round_robin(*, session_pk: int) -> TriageAssignment | None:
    """Give a session that is waiting in the triage queue, and that nobody has taken, to the next
    reviewer in turn: the active staff member of `SELFEVAL_TRIAGE_ROUND_ROBIN_GROUP` whose latest
    assignment (given or taken) is the oldest, one who has none first, ties by username.

    Does nothing when the setting names no group, the group has nobody, the session does not need
    review or is already assigned. Call inside the transaction that put the session in the queue.
    """
    group = settings.SELFEVAL_TRIAGE_ROUND_ROBIN_GROUP
    if not group:
        return None
    waiting = DiagnosisSession.objects.filter(pk=session_pk, needs_review=True, triage_assignment__isnull=True)
    if not waiting.exists():
        return None
    latest = TriageAssignment.objects.filter(assignee=OuterRef("pk")).order_by("-assigned_at").values("assigned_at")
    reviewer = (
        get_user_model()
        .objects.filter(is_active=True, is_staff=True, groups__name=group)
        .annotate(latest=Subquery(latest[:1]))
        .order_by(F("latest").asc(nulls_first=True), "username")
        .first()
    )
    if reviewer is None:
        return None
    assignment = TriageAssignment(session_id=session_pk, assignee=reviewer, assigned_at=timezone.now())
    created = TriageAssignment.objects.bulk_create([assignment], ignore_conflicts=True)
    return created[0] if created else None


def triage_assignments_release(*, session_pks: list[int], user: AbstractBaseUser) -> int:
    """Release the user's own assignments among the sessions (anyone's with the reassign
    permission); returns how many were released."""
    _require_review(user)
    assignments = TriageAssignment.objects.filter(session_id__in=set(session_pks))
    if not user.has_perm(REASSIGN_PERMISSION):
        assignments = assignments.filter(assignee=user)
    deleted, _ = assignments.delete()
    return deleted


def lock_is_live(lock: ReviewLock | None, *, now: dt.datetime | None = None) -> bool:
    if lock is None:
        return False
    return lock.seen_at >= (now or timezone.now()) - dt.timedelta(seconds=REVIEW_LOCK_SECONDS)


def lock_holder_name(lock: ReviewLock) -> str:
    return lock.holder.get_full_name() or lock.holder.get_username()


def review_lock_refresh(*, session: DiagnosisSession, user: AbstractBaseUser) -> ReviewLock:
    """The inspector's heartbeat: `user` has `session` open. Returns the session's live lock: the
    user's own (taken or refreshed), or another reviewer's, which it leaves alone.

    Only reviewers hold locks; for anyone else the current lock is returned untouched (it may be
    None, or expired).
    """
    now = timezone.now()
    if not user.has_perm(REVIEW_PERMISSION):
        return ReviewLock.objects.filter(session=session).select_related("holder").first()
    with transaction.atomic():
        lock, created = (
            ReviewLock.objects.select_for_update(of=("self",))
            .select_related("holder")
            .get_or_create(session=session, defaults={"holder": user, "opened_at": now, "seen_at": now})
        )
        if created:
            return lock
        if lock.holder_id == user.pk:
            lock.seen_at = now
            lock.save(update_fields=["seen_at"])
        elif not lock_is_live(lock, now=now):
            lock.holder, lock.opened_at, lock.seen_at = user, now, now
            lock.save(update_fields=["holder", "opened_at", "seen_at"])
    return lock


def review_locks_held_by_others(*, session_pks: list[int], user: AbstractBaseUser) -> dict[int, ReviewLock]:
    """The live locks other reviewers hold on these sessions, by session pk, in one query. The lock
    stays soft: a review recorded meanwhile is recorded, and the reviewer is told whose hold it went
    over."""
    locks = ReviewLock.objects.filter(session_id__in=session_pks).exclude(holder=user).select_related("holder")
    return {lock.session_id: lock for lock in locks if lock_is_live(lock)}


def review_lock_held_by_other(*, session: DiagnosisSession, user: AbstractBaseUser) -> ReviewLock | None:
    """The live lock another reviewer holds on `session`, if any (`review_locks_held_by_others`)."""
    return review_locks_held_by_others(session_pks=[session.pk], user=user).get(session.pk)


def review_lock_release(*, session: DiagnosisSession, user: AbstractBaseUser) -> None:
    """The user left the session (saved a review, closed the page): their lock goes."""
    ReviewLock.objects.filter(session=session, holder=user).delete()
