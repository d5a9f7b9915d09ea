"""Reads behind the admin dashboard and the calibration panel; every aggregate runs in SQL.

A date range is [start, end) in the site's time zone. The session aggregates take one pass over
the range (an index range scan on created_at); the AIOps check counts read the failed check rows
of the sessions whose AIOps verdict is not PASS, through the (aiops_verdict, created_at) index.
Days before today are cached for DAY_CACHE_SECONDS, so only today's sessions are read on most
requests.
"""

import datetime as dt
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, Case, CaseStatus
from diagnosis.models import AiOpsCheck, AiOpsVerdict, DiagnosisSession, SessionReview, VerifierVerdict

SCORE_BUCKETS = [(low, low + 9 if low < 90 else 100) for low in range(0, 100, 10)]
VERDICTS = [*VerifierVerdict.values, ""]
FEEDBACKS = ["useful", "not_useful", ""]
JUDGEMENTS = ["correct", "partly_correct", "wrong", ""]


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


@dataclass
class DaySummary:
    day: dt.date
    total: int = 0
    useful: int = 0
    not_useful: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)


@dataclass
class Dashboard:
    range: DateRange
    days: list[DaySummary]
    total: int
    useful: int
    not_useful: int
    verdicts: dict[str, int]
    needs_review: int
    reviewed: int
    score_buckets: list[tuple[int, int, int]]  # (low, high, count)
    score_missing: int
    aiops_failures: list[tuple[str, int]]
    open_bad_cases: int
    pending_cases: int

    @property
    def feedback_total(self) -> int:
        return self.useful + self.not_useful

    @property
    def max_day_total(self) -> int:
        return max((day.total for day in self.days), default=0)

    @property
    def max_bucket(self) -> int:
        return max((count for _low, _high, count in self.score_buckets), default=0)


def _range_sessions(date_range: DateRange):
    return DiagnosisSession.objects.filter(created_at__gte=date_range.start_at, created_at__lt=date_range.end_before)


_BUCKET_KEYS = [f"score_{low}" for low, _high in SCORE_BUCKETS]
_COUNT_KEYS = [
    "total", "useful", "not_useful", "v_pass", "v_low", "v_reject",
    "needs_review_count", "reviewed_count", "score_missing", *_BUCKET_KEYS,
]  # fmt: skip
# Past days are cached this long: a 90-day dashboard then reads today's sessions only. Figures of
# earlier days (late feedback, new reviews) catch up within this delay.
DAY_CACHE_SECONDS = 300


def _empty_day() -> dict:
    return {**dict.fromkeys(_COUNT_KEYS, 0), "aiops": {}}


def _aggregate_days(date_range: DateRange) -> dict[dt.date, dict]:
    """One row of counts per day of the range, in two queries (sessions, failed AIOps checks).

    COUNT(created_at), not COUNT(id): every column the query reads is in the session_created_dashboard
    index, so PostgreSQL answers from the index alone (an index-only scan).
    """
    bucket_aggregates = {
        f"score_{low}": Count("created_at", filter=Q(evidence_score__gte=low, evidence_score__lte=high))
        for low, high in SCORE_BUCKETS
    }
    rows = (
        _range_sessions(date_range)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values("day")
        .annotate(
            total=Count("created_at"),
            useful=Count("created_at", filter=Q(feedback="useful")),
            not_useful=Count("created_at", filter=Q(feedback="not_useful")),
            v_pass=Count("created_at", filter=Q(verifier_verdict=VerifierVerdict.PASS)),
            v_low=Count("created_at", filter=Q(verifier_verdict=VerifierVerdict.LOW_CONFID)),
            v_reject=Count("created_at", filter=Q(verifier_verdict=VerifierVerdict.REJECT)),
            needs_review_count=Count("created_at", filter=Q(needs_review=True)),
            reviewed_count=Count("created_at", filter=Q(reviewed_at__isnull=False)),
            score_missing=Count("created_at", filter=Q(evidence_score__isnull=True)),
            **bucket_aggregates,
        )
    )
    days: dict[dt.date, dict] = {}
    for row in rows:
        days[row["day"]] = {**{key: row[key] for key in _COUNT_KEYS}, "aiops": {}}
    for day, name, count in _aiops_check_failures_by_day(date_range):
        days.setdefault(day, _empty_day())["aiops"][name] = count
    return days


def _day_rows(date_range: DateRange) -> dict[dt.date, dict]:
    """Counts per day; days before today come from the cache when they are there."""
    today = timezone.localdate()
    zone = timezone.get_current_timezone_name()
    days = [date_range.start + dt.timedelta(days=offset) for offset in range(date_range.days)]
    keys = {day: f"selfeval:dashboard:day:{zone}:{day.isoformat()}" for day in days if day < today}
    cached = cache.get_many(list(keys.values()))
    result = {day: cached[key] for day, key in keys.items() if key in cached}
    missing = [day for day in days if day not in result]
    if missing:
        fresh = _aggregate_days(DateRange(min(missing), max(missing)))
        to_cache = {}
        for day in missing:
            result[day] = fresh.get(day) or _empty_day()
            if day in keys:
                to_cache[keys[day]] = result[day]
        cache.set_many(to_cache, DAY_CACHE_SECONDS)
    return result


def _verdicts(counts: dict) -> dict[str, int]:
    return {
        VerifierVerdict.PASS: counts["v_pass"],
        VerifierVerdict.LOW_CONFID: counts["v_low"],
        VerifierVerdict.REJECT: counts["v_reject"],
    }


def dashboard_get(*, date_range: DateRange) -> Dashboard:
    by_day = _day_rows(date_range)
    days: list[DaySummary] = []
    totals = dict.fromkeys(_COUNT_KEYS, 0)
    aiops: dict[str, int] = {}
    for offset in range(date_range.days):
        day = date_range.start + dt.timedelta(days=offset)
        row = by_day[day]
        days.append(
            DaySummary(
                day=day,
                total=row["total"],
                useful=row["useful"],
                not_useful=row["not_useful"],
                verdicts=_verdicts(row),
            )
        )
        for key in _COUNT_KEYS:
            totals[key] += row[key]
        for name, count in row["aiops"].items():
            aiops[name] = aiops.get(name, 0) + count
    verdicts = _verdicts(totals)
    verdicts[""] = totals["total"] - sum(verdicts.values())
    return Dashboard(
        range=date_range,
        days=days,
        total=totals["total"],
        useful=totals["useful"],
        not_useful=totals["not_useful"],
        verdicts=verdicts,
        needs_review=totals["needs_review_count"],
        reviewed=totals["reviewed_count"],
        score_buckets=[(low, high, totals[f"score_{low}"]) for low, high in SCORE_BUCKETS],
        score_missing=totals["score_missing"],
        aiops_failures=sorted(aiops.items(), key=lambda item: (-item[1], item[0]))[:20],
        open_bad_cases=BadCase.objects.filter(status__in=OPEN_BAD_CASE_STATUSES).count(),
        pending_cases=Case.objects.filter(status=CaseStatus.PENDING).count(),
    )


def _aiops_check_failures_by_day(date_range: DateRange) -> list[tuple[dt.date, str, int]]:
    """(day, check name, sessions where it failed) in the range, from the AIOps check rows.

    A failed check makes the AIOps verdict WARN or FAIL, so only those sessions are read.
    """
    rows = (
        AiOpsCheck.objects.filter(
            passed=False,
            session__created_at__gte=date_range.start_at,
            session__created_at__lt=date_range.end_before,
            session__aiops_verdict__in=[AiOpsVerdict.WARN, AiOpsVerdict.FAIL],
        )
        .annotate(day=TruncDate("session__created_at"))
        .order_by()
        .values_list("day", "name")
        .annotate(sessions=Count("pk"))
    )
    return list(rows)


# Which user feedback / reviewer judgement each verdict predicts: a verdict agrees with a session's
# feedback or judgement when that value is in its set. The calibration panel's agreement rates.
VERDICT_AGREES_WITH_FEEDBACK = {"PASS": {"useful"}, "LOW_CONFID": {"not_useful"}, "REJECT": {"not_useful"}}
VERDICT_AGREES_WITH_JUDGEMENT = {
    "PASS": {"correct"},
    "LOW_CONFID": {"partly_correct", "wrong"},
    "REJECT": {"wrong"},
}


@dataclass
class Calibration:
    range: DateRange
    # (verdict, feedback, judgement) -> sessions
    cube: dict[tuple[str, str, str], int]
    verifier_right: int
    verifier_wrong: int

    def cell(self, *, verdict: str | None = None, feedback: str | None = None, judgement: str | None = None) -> int:
        return sum(
            count
            for (v, f, j), count in self.cube.items()
            if (verdict is None or v == verdict)
            and (feedback is None or f == feedback)
            and (judgement is None or j == judgement)
        )


def calibration_get(*, date_range: DateRange) -> Calibration:
    rows = (
        _range_sessions(date_range)
        .order_by()
        .values("verifier_verdict", "feedback", "review_judgement")
        .annotate(n=Count("created_at"))
    )
    cube = {(row["verifier_verdict"], row["feedback"], row["review_judgement"]): row["n"] for row in rows}
    reviews = SessionReview.objects.filter(
        session__created_at__gte=date_range.start_at, session__created_at__lt=date_range.end_before
    ).aggregate(
        right=Count("pk", filter=Q(verifier_was_right=True)),
        wrong=Count("pk", filter=Q(verifier_was_right=False)),
    )
    return Calibration(range=date_range, cube=cube, verifier_right=reviews["right"], verifier_wrong=reviews["wrong"])
