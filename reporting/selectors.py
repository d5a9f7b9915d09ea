"""Reads behind the admin dashboard and the calibration panel, scoped to the projects the user sees.

A range costs a number of days, not of sessions: days before today are read from the per-day
rollups (`reporting.models.SessionDay`, recounted here when a write marked a day changed),
today is counted live from the sessions with the same computation the rollups are stored from
(`reporting.counting.session_days_compute`). Days are calendar days of TIME_ZONE.
"""

import datetime as dt
import operator
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.utils import timezone

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, Case, CaseStatus
from core.tenancy.access import Access
from diagnosis.models import Feedback
from diagnosis.selectors import sessions_needing_review
from reporting.counting import (
    CUBE_FEEDBACKS,
    CUBE_JUDGEMENTS,
    CUBE_SIZE,
    CUBE_VERDICTS,
    SCORE_BUCKETS,
    session_days_compute,
    session_days_zone,
)
from reporting.models import SessionDay
from reporting.services.session_days import session_days_settle

VERDICTS = CUBE_VERDICTS
FEEDBACKS = CUBE_FEEDBACKS
JUDGEMENTS = CUBE_JUDGEMENTS
_CELLS = [(v, f, j) for v in VERDICTS for f in FEEDBACKS for j in JUDGEMENTS]  # the cube's order


@dataclass(frozen=True)
class DateRange:
    start: dt.date
    end: dt.date  # inclusive, as the reviewer typed it

    @property
    def start_at(self) -> dt.datetime:
        return timezone.make_aware(dt.datetime.combine(self.start, dt.time.min))

    @property
    def end_before(self) -> dt.datetime:
        return timezone.make_aware(dt.datetime.combine(self.end + dt.timedelta(days=1), dt.time.min))

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def lookups(self) -> dict[str, str]:
        """Changelist query parameters selecting the same range."""
        return {
            "created_at__gte": self.start_at.isoformat(sep=" "),
            "created_at__lt": self.end_before.isoformat(sep=" "),
        }


def date_range_parse(*, start: str | None, end: str | None, default_days: int = 30) -> tuple[DateRange, list[str]]:
    """The range from two ISO dates; bad or missing values fall back to the last `default_days`."""
    errors: list[str] = []
    today = timezone.localdate()
    parsed: dict[str, dt.date | None] = {"start": None, "end": None}
    for name, raw in (("start", start), ("end", end)):
        if raw:
            try:
                parsed[name] = dt.date.fromisoformat(raw)
            except ValueError:
                errors.append(name)
    end_date = parsed["end"] or today
    start_date = parsed["start"] or end_date - dt.timedelta(days=default_days - 1)
    if start_date > end_date:
        errors.append("order")
        start_date, end_date = end_date, start_date
    # One year at most: the per-day chart stays readable and the scan bounded.
    if (end_date - start_date).days > 366:
        errors.append("span")
        start_date = end_date - dt.timedelta(days=366)
    return DateRange(start_date, end_date), errors


# Which user feedback / reviewer judgement each verdict predicts: a verdict agrees with a session's
# feedback or judgement when that value is in its set. The calibration panel's agreement rates.
VERDICT_AGREES_WITH_FEEDBACK = {"PASS": {"useful"}, "LOW_CONFID": {"not_useful"}, "REJECT": {"not_useful"}}
VERDICT_AGREES_WITH_JUDGEMENT = {
    "PASS": {"correct"},
    "LOW_CONFID": {"partly_correct", "wrong"},
    "REJECT": {"wrong"},
}


@dataclass
class DayFigures:
    """One day of the range, every project the user sees added up."""

    day: dt.date
    total: int = 0
    reviewed: int = 0
    score_missing: int = 0
    score_buckets: list[int] = field(default_factory=lambda: [0] * len(SCORE_BUCKETS))
    # sessions per (verdict, feedback, judgement), in the order of _CELLS (the rollups' cube)
    cube: list[int] = field(default_factory=lambda: [0] * CUBE_SIZE)
    aiops_failures: dict[str, int] = field(default_factory=dict)
    verifier_right: int = 0
    verifier_wrong: int = 0
    reviews: int = 0

    def add(self, row: "SessionDay | DayFigures") -> None:
        """Count a rollup row (or another day's figures) in."""
        self.total += row.total if isinstance(row, DayFigures) else row.sessions
        self.reviewed += row.reviewed
        self.score_missing += row.score_missing
        if row.score_buckets:
            self.score_buckets = list(map(operator.add, self.score_buckets, row.score_buckets))
        if row.cube:
            self.cube = list(map(operator.add, self.cube, row.cube))
        for name, count in row.aiops_failures.items():
            self.aiops_failures[name] = self.aiops_failures.get(name, 0) + count
        self.verifier_right += row.verifier_right
        self.verifier_wrong += row.verifier_wrong
        self.reviews += row.reviews

    def cell(self, *, verdict: str | None = None, feedback: str | None = None, judgement: str | None = None) -> int:
        return sum(
            count
            for (v, f, j), count in zip(_CELLS, self.cube, strict=True)
            if count
            and (verdict is None or v == verdict)
            and (feedback is None or f == feedback)
            and (judgement is None or j == judgement)
        )

    @property
    def verdicts(self) -> dict[str, int]:
        size = len(self.cube) // len(VERDICTS)
        return {verdict: sum(self.cube[i * size : (i + 1) * size]) for i, verdict in enumerate(VERDICTS)}

    @property
    def useful(self) -> int:
        return self.cell(feedback=Feedback.USEFUL)

    @property
    def not_useful(self) -> int:
        return self.cell(feedback=Feedback.NOT_USEFUL)


_STORED = [
    "sessions", "reviewed", "score_missing", "score_buckets", "cube", "aiops_failures",
    "verifier_right", "verifier_wrong", "reviews",
]  # fmt: skip


def range_days(*, date_range: DateRange, access: Access) -> list[DayFigures]:
    """Every day of the range, in order: past days from the rollups (two queries, after any day
    that changed since it was counted is recounted), today and any later day counted live (four
    queries)."""
    today = timezone.now().astimezone(session_days_zone()).date()
    figures = {
        day: DayFigures(day=day)
        for day in (date_range.start + dt.timedelta(days=offset) for offset in range(date_range.days))
    }
    last_stored = min(date_range.end, today - dt.timedelta(days=1))
    if date_range.start <= last_stored:
        session_days_settle(first=date_range.start, last=last_stored)
        stored = (
            SessionDay.objects.visible_to(access)
            .filter(day__gte=date_range.start, day__lte=last_stored)
            .values_list("day", *_STORED)
        )
        for day, *values in stored:  # tuples, not model instances: a year is 365 rows per project
            figures[day].add(SimpleNamespace(**dict(zip(_STORED, values, strict=True))))
    if date_range.end >= today:
        live = session_days_compute(access=access, first=max(date_range.start, today), last=date_range.end)
        for (_project_id, day), row in live.items():
            figures[day].add(row)
    return list(figures.values())


def range_total(days: list[DayFigures], date_range: DateRange) -> DayFigures:
    total = DayFigures(day=date_range.start)
    for day in days:
        total.add(day)
    return total


@dataclass
class Dashboard:
    range: DateRange
    days: list[DayFigures]
    totals: DayFigures
    needs_review: int  # the triage queue's count: every date, not only the range
    open_bad_cases: int
    pending_cases: int

    @property
    def total(self) -> int:
        return self.totals.total

    @property
    def useful(self) -> int:
        return self.totals.useful

    @property
    def not_useful(self) -> int:
        return self.totals.not_useful

    @property
    def feedback_total(self) -> int:
        return self.useful + self.not_useful

    @property
    def verdicts(self) -> dict[str, int]:
        return self.totals.verdicts

    @property
    def reviewed(self) -> int:
        return self.totals.reviewed

    @property
    def score_buckets(self) -> list[tuple[int, int, int]]:
        return [(low, high, count) for (low, high), count in zip(SCORE_BUCKETS, self.totals.score_buckets, strict=True)]

    @property
    def score_missing(self) -> int:
        return self.totals.score_missing

    @property
    def aiops_failures(self) -> list[tuple[str, int]]:
        return sorted(self.totals.aiops_failures.items(), key=lambda item: (-item[1], item[0]))[:20]

    @property
    def max_day_total(self) -> int:
        return max((day.total for day in self.days), default=0)

    @property
    def max_bucket(self) -> int:
        return max(self.totals.score_buckets, default=0)


def dashboard_get(*, date_range: DateRange, access: Access) -> Dashboard:
    days = range_days(date_range=date_range, access=access)
    return Dashboard(
        range=date_range,
        days=days,
        totals=range_total(days, date_range),
        needs_review=sessions_needing_review(access=access).count(),
        open_bad_cases=BadCase.objects.visible_to(access).filter(status__in=OPEN_BAD_CASE_STATUSES).count(),
        pending_cases=Case.objects.visible_to(access).filter(status=CaseStatus.PENDING).count(),
    )


@dataclass
class Calibration:
    range: DateRange
    days: list[DayFigures]
    totals: DayFigures

    @property
    def verifier_right(self) -> int:
        return self.totals.verifier_right

    @property
    def verifier_wrong(self) -> int:
        return self.totals.verifier_wrong

    def cell(self, **lookups: str | None) -> int:
        return self.totals.cell(**lookups)


def calibration_get(*, date_range: DateRange, access: Access) -> Calibration:
    days = range_days(date_range=date_range, access=access)
    return Calibration(range=date_range, days=days, totals=range_total(days, date_range))
