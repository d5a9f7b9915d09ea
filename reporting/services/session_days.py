"""Keeping the per-day rollups (`SessionDay`) exact: recomputed from the sessions, never incremented.

How a write says what it changed: every domain write that changes what a day counts sends
`diagnosis.signals.figures_changed` once, inside its transaction, with the (project, moment)
of each dated thing it changed (ingestion, the evaluation merge, a vote, a review, an imported
decision, a purge); the receiver
(`reporting.receivers`) turns the moments into (project, day) keys and records them with
`session_days_mark_changed`: one insert of append-only marks, so the mark commits or rolls back
with the change, and no write waits on another (no shared row is read, modified and written).
A signal, not a call: this app reads the diagnosis, feedback and cases data to recount, so those
apps may not import it; the sender names what changed, this app alone knows which rows that
touches. `tests/reporting/test_write_paths.py` drives every write service and checks the
dashboard against a full recount, so a write that forgets the signal fails there.

A reader calls `session_days_settle` for the stored days it is about to read: it recomputes the
marked days and deletes the marks it saw. Settles lock the rows they rewrite, so two of them run
one after the other and the second counts after the first committed (READ COMMITTED takes a new
snapshot per statement); a mark is deleted only when it committed before the counts that replace
it ran.
"""

import datetime as dt
from collections.abc import Iterable

from django.db import transaction

from core.tenancy.access import Access
from diagnosis.models import DiagnosisSession
from reporting.counting import CUBE_SIZE, SCORE_BUCKETS, session_days_compute, session_days_zone
from reporting.models import SessionDay, SessionDayChange

DayKey = tuple[int, dt.date]
_MARKS_PER_DELETE = 5000  # bound on the parameters of one statement
_FIGURES = [
    "sessions", "reviewed", "score_missing", "score_buckets", "cube", "aiops_failures",
    "verifier_right", "verifier_wrong", "reviews",
]  # fmt: skip


def session_day_key(*, project_id: int, created_at: dt.datetime) -> DayKey:
    """The rollup row of a thing of `project_id` dated `created_at` (a session, a review)."""
    return project_id, created_at.astimezone(session_days_zone()).date()


def session_days_mark_changed(*, keys: Iterable[DayKey]) -> None:
    """Mark these (project, day) rollups as changed, in the caller's transaction (one insert)."""
    SessionDayChange.objects.bulk_create(
        [SessionDayChange(project_id=project_id, day=day) for project_id, day in sorted(set(keys))]
    )


def session_days_settle(*, first: dt.date, last: dt.date) -> None:
    """Recompute the rollups of first..last that changed since they were counted (one query when
    none did; with changes, six statements for one day and four more per further day)."""
    marks = list(SessionDayChange.objects.filter(day__gte=first, day__lte=last).values_list("pk", "project_id", "day"))
    if not marks:
        return
    keys = sorted({(project_id, day) for _pk, project_id, day in marks})
    with transaction.atomic():
        # ON CONFLICT DO UPDATE locks each row until commit: the counts below run after any
        # concurrent settle of the same day has committed.
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
        _marks_delete([pk for pk, _project_id, _day in marks])


def _marks_delete(pks: list[int]) -> None:
    for start in range(0, len(pks), _MARKS_PER_DELETE):
        SessionDayChange.objects.filter(pk__in=pks[start : start + _MARKS_PER_DELETE]).delete()


def _upsert(rows: list[SessionDay], fields: list[str]) -> None:
    SessionDay.objects.bulk_create(rows, update_conflicts=True, unique_fields=["project", "day"], update_fields=fields)


def session_days_rebuild(*, first: dt.date, last: dt.date, chunk_days: int = 31) -> int:
    """Recompute every rollup row of first..last from scratch (all projects); returns the rows stored.

    A month at a time, each in its own transaction: rows of the month are replaced whole.
    """
    stored = 0
    start = first
    while start <= last:
        end = min(last, start + dt.timedelta(days=chunk_days - 1))
        with transaction.atomic():
            # Marks seen before the counts are settled by them; later ones stay for the next settle.
            marks = list(SessionDayChange.objects.filter(day__gte=start, day__lte=end).values_list("pk", flat=True))
            rows = session_days_compute(access=Access.to_everything(), first=start, last=end)
            SessionDay.objects.filter(day__gte=start, day__lte=end).delete()
            SessionDay.objects.bulk_create(rows.values(), batch_size=1000)
            _marks_delete(marks)
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
