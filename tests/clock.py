"""The test clock: every test starts at the same pinned instant, `now()`, and time ticks from there.

No test reads the real clock. The instant is noon UTC of the day the run starts, so a test never
straddles midnight, and a browser (which keeps the real clock) accepts the server's cookies.
`--clock-ahead-days N` moves the whole run N days ahead (CI runs the suite 400 days ahead too);
`--test-clock ISO-DATETIME` pins any instant, to replay a run that failed: the pytest header
prints the instant of every run.

Fixtures and payloads take their times relative to `now()` (`ago(hours=3)`), never calendar dates.
"""

import datetime as dt

_pinned: dt.datetime | None = None


def configure(*, at: str | None, ahead_days: int) -> dt.datetime:
    """Fix the run's instant; called once from pytest_configure, before any test is collected."""
    global _pinned
    if at:
        base = dt.datetime.fromisoformat(at)
        base = base if base.tzinfo else base.replace(tzinfo=dt.UTC)
    else:
        today = dt.datetime.now(dt.UTC).date()
        base = dt.datetime.combine(today, dt.time(12), tzinfo=dt.UTC)
    _pinned = base + dt.timedelta(days=ahead_days)
    return _pinned


def now() -> dt.datetime:
    """The instant every test starts at (timezone-aware, UTC)."""
    if _pinned is None:
        raise RuntimeError("the test clock is configured by tests/conftest.py (pytest_configure)")
    return _pinned


def ago(**delta: float) -> dt.datetime:
    """`now()` minus a timedelta's keyword arguments: `ago(days=2)`, `ago(seconds=20)`."""
    return now() - dt.timedelta(**delta)


def iso(moment: dt.datetime) -> str:
    """The API's form of an instant: `2026-11-29T08:00:00Z`."""
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
