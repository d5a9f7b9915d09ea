"""Keeping the per-day rollups (`SessionDay`) exact: recomputed from the sessions, never incremented.

Every service that changes what a day counts (ingestion, evaluation and its state, feedback,
reviews) calls `session_days_refresh` with the (project, day) keys it touched, inside its own
transaction, so the rollup commits or rolls back with the change. The rows are locked first:
two transactions refreshing the same day run one after the other, and the second counts after
the first committed (READ COMMITTED takes a new snapshot per statement), so neither overwrites
the other's change with an older count.
"""

import datetime as dt
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction

from diagnosis.models import DiagnosisSession, SessionDay
from diagnosis.selectors import CUBE_SIZE, SCORE_BUCKETS, session_days_compute, session_days_zone
from selfeval_site.tenancy.access import Access

DayKey = tuple[int, dt.date]
# Keys collected by `session_days_deferred`, refreshed when it ends; None outside one.
_deferred: ContextVar[set[DayKey] | None] = ContextVar("session_days_deferred", default=None)
_FIGURES = [
    "sessions", "reviewed", "score_missing", "score_buckets", "cube", "aiops_failures",
    "verifier_right", "verifier_wrong", "reviews",
]  # fmt: skip


def session_day_key(*, project_id: int, created_at: dt.datetime) -> DayKey:
    """The rollup row a session created at `created_at` counts in."""
    return project_id, created_at.astimezone(session_days_zone()).date()


def session_day_keys(*, session_pks: Iterable[int]) -> set[DayKey]:
    """The rollup rows these sessions count in (one query)."""
    rows = DiagnosisSession.objects.filter(pk__in=list(session_pks)).values_list("project_id", "created_at")
    return {session_day_key(project_id=project_id, created_at=created_at) for project_id, created_at in rows}


def session_days_refresh(*, keys: Iterable[DayKey]) -> None:
    """Recompute these (project, day) rows from the sessions, in the caller's transaction.

    Six statements for one day: lock the rows (an upsert, which creates the missing ones), four
    counts, write the figures (an upsert again); four more per further day.
    """
    pending = _deferred.get()
    if pending is not None:
        pending.update(keys)
        return
    keys = sorted(set(keys))
    if not keys:
        return
    with transaction.atomic(savepoint=False):  # part of the caller's transaction, no savepoint of its own
        # ON CONFLICT DO UPDATE locks each row until commit: the counts below run after any
        # concurrent refresh of the same day has committed.
        _upsert([SessionDay(project_id=project_id, day=day) for project_id, day in keys], ["sessions"])
        rows = []
        for day in sorted({day for _project_id, day in keys}):
            projects = {project_id for project_id, key_day in keys if key_day == day}
            fresh = session_days_compute(access=Access.to_everything(), first=day, last=day, project_ids=projects)
            for project_id in sorted(projects):
                row = SessionDay(project_id=project_id, day=day)
                _copy_figures(fresh.get((project_id, day)), row)
                rows.append(row)
        _upsert(rows, _FIGURES)


def _upsert(rows: list[SessionDay], fields: list[str]) -> None:
    SessionDay.objects.bulk_create(rows, update_conflicts=True, unique_fields=["project", "day"], update_fields=fields)


@contextmanager
def session_days_deferred() -> Iterator[None]:
    """Refresh the rollups of every session written inside the block once, when it ends.

    For a transaction that writes several sessions (an OTLP export, an import batch): each day
    is recounted once, and its row is locked after every session row the block locked, so two
    such transactions lock in the same order (their sessions sorted, then the days) and cannot
    deadlock on a day they share. Use it inside the transaction.
    """
    token = _deferred.set(set())
    try:
        yield
        keys = _deferred.get()
    finally:
        _deferred.reset(token)
    session_days_refresh(keys=keys)


def session_days_rebuild(*, first: dt.date, last: dt.date, chunk_days: int = 31) -> int:
    """Recompute every rollup row of first..last from scratch (all projects); returns the rows stored.

    A month at a time, each in its own transaction: rows of the month are replaced whole.
    """
    stored = 0
    start = first
    while start <= last:
        end = min(last, start + dt.timedelta(days=chunk_days - 1))
        with transaction.atomic():
            rows = session_days_compute(access=Access.to_everything(), first=start, last=end)
            SessionDay.objects.filter(day__gte=start, day__lte=end).delete()
            SessionDay.objects.bulk_create(rows.values(), batch_size=1000)
        stored += len(rows)
        start = end + dt.timedelta(days=1)
    return stored


def session_days_span() -> tuple[dt.date, dt.date] | None:
    """The first and last day that has sessions, in the rollups' zone (None without sessions)."""
    first = DiagnosisSession.objects.order_by("created_at").values_list("created_at", flat=True).first()
    last = DiagnosisSession.objects.order_by("-created_at").values_list("created_at", flat=True).first()
    if first is None:
        return None
    zone = session_days_zone()
    return first.astimezone(zone).date(), last.astimezone(zone).date()


def _copy_figures(source: SessionDay | None, target: SessionDay) -> None:
    if source is None:  # nothing left to count that day
        source = SessionDay(score_buckets=[0] * len(SCORE_BUCKETS), cube=[0] * CUBE_SIZE, aiops_failures={})
    for name in _FIGURES:
        setattr(target, name, getattr(source, name))
