"""The dashboard's figures per day, as stored (and settled) and as a fresh recount: what a test of a
write compares to prove the day rollups stayed exact."""

import datetime as dt

from core.tenancy.access import Access
from reporting.counting import session_days_compute
from reporting.selectors import DateRange, DayFigures, dashboard_get
from tests import clock


def figures(day: DayFigures) -> tuple:
    return (
        day.total, day.reviewed, day.score_missing, day.score_buckets, day.cube, day.aiops_failures,
        day.verifier_right, day.verifier_wrong, day.reviews,
    )  # fmt: skip


def last_days(days: int) -> DateRange:
    """The `days` days ending today (the test clock's)."""
    today = clock.now().date()
    return DateRange(today - dt.timedelta(days=days - 1), today)


def dashboard_days(*, days: int) -> dict[dt.date, tuple]:
    """The dashboard's figures of the last `days` days: reading stores the past days' rollups and
    settles every mark so far."""
    board = dashboard_get(date_range=last_days(days), access=Access.to_everything())
    return {day.day: figures(day) for day in board.days}


def recounted_days(*, days: int) -> dict[dt.date, tuple]:
    """Every one of the last `days` days counted from the sessions, nothing stored read."""
    span = last_days(days)
    found = {
        span.start + dt.timedelta(days=n): DayFigures(day=span.start + dt.timedelta(days=n)) for n in range(span.days)
    }
    for (_project, day), row in session_days_compute(
        access=Access.to_everything(), first=span.start, last=span.end
    ).items():
        found[day].add(row)
    return {day: figures(day_figures) for day, day_figures in found.items()}
