"""Reads behind the admin dashboard and the calibration panel; every aggregate runs in SQL.

A date range is [start, end) in the site's time zone. The session aggregates take one pass over
the range (an index range scan on created_at); the AIOps check counts read only the sessions
whose AIOps verdict is not PASS, through the (aiops_verdict, created_at) index.
"""

import datetime as dt
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, Case, CaseStatus
from diagnosis.models import AiOpsVerdict, DiagnosisSession, SessionReview

SCORE_BUCKETS = [(low, low + 9 if low < 90 else 100) for low in range(0, 100, 10)]
VERDICTS = ["PASS", "LOW_CONFID", "REJECT", ""]
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


def dashboard_get(*, date_range: DateRange) -> Dashboard:
    bucket_aggregates = {
        f"score_{low}": Count("pk", filter=Q(evidence_score__gte=low, evidence_score__lte=high))
        for low, high in SCORE_BUCKETS
    }
    rows = (
        _range_sessions(date_range)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values("day")
        .annotate(
            total=Count("pk"),
            useful=Count("pk", filter=Q(feedback="useful")),
            not_useful=Count("pk", filter=Q(feedback="not_useful")),
            v_pass=Count("pk", filter=Q(verifier_verdict="PASS")),
            v_low=Count("pk", filter=Q(verifier_verdict="LOW_CONFID")),
            v_reject=Count("pk", filter=Q(verifier_verdict="REJECT")),
            needs_review_count=Count("pk", filter=Q(needs_review=True)),
            reviewed_count=Count("pk", filter=Q(reviewed_at__isnull=False)),
            score_missing=Count("pk", filter=Q(evidence_score__isnull=True)),
            **bucket_aggregates,
        )
    )
    by_day: dict[dt.date, dict] = {row["day"]: row for row in rows}
    days: list[DaySummary] = []
    totals = dict.fromkeys(("total", "useful", "not_useful", "v_pass", "v_low", "v_reject"), 0)
    totals.update(needs_review_count=0, reviewed_count=0, score_missing=0, **dict.fromkeys(bucket_aggregates, 0))
    for offset in range(date_range.days):
        day = date_range.start + dt.timedelta(days=offset)
        row = by_day.get(day)
        summary = DaySummary(day=day)
        if row:
            summary.total, summary.useful, summary.not_useful = row["total"], row["useful"], row["not_useful"]
            summary.verdicts = {"PASS": row["v_pass"], "LOW_CONFID": row["v_low"], "REJECT": row["v_reject"]}
            for key in totals:
                totals[key] += row[key]
        days.append(summary)
    verdicts = {"PASS": totals["v_pass"], "LOW_CONFID": totals["v_low"], "REJECT": totals["v_reject"]}
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
        aiops_failures=aiops_check_failures(date_range=date_range),
        open_bad_cases=BadCase.objects.filter(status__in=OPEN_BAD_CASE_STATUSES).count(),
        pending_cases=Case.objects.filter(status=CaseStatus.PENDING).count(),
    )


def aiops_check_failures(*, date_range: DateRange) -> list[tuple[str, int]]:
    """(check name, sessions where it failed) in the range, most frequent first.

    The checks live only in the JSON layer, so this unnests them in SQL (jsonb on PostgreSQL,
    json_each on SQLite). A failed check makes the AIOps verdict WARN or FAIL, so only those
    sessions are read.
    """
    table = DiagnosisSession._meta.db_table
    params = [date_range.start_at, date_range.end_before, AiOpsVerdict.WARN, AiOpsVerdict.FAIL]
    if connection.vendor == "postgresql":
        sql = f"""
            SELECT elem->>'check' AS name, COUNT(*) FROM {table} s,
                   jsonb_array_elements(
                       CASE WHEN jsonb_typeof(s.self_evaluation->'aiops_rule_evaluation'->'checks') = 'array'
                            THEN s.self_evaluation->'aiops_rule_evaluation'->'checks' ELSE '[]'::jsonb END) elem
            WHERE s.created_at >= %s AND s.created_at < %s AND s.aiops_verdict IN (%s, %s)
              AND jsonb_typeof(elem) = 'object' AND elem->'passed' = 'false'::jsonb
            GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20
        """  # noqa: S608 (the table name is ours; values are parameters)
    else:
        sql = f"""
            SELECT json_extract(elem.value, '$.check') AS name, COUNT(*) FROM {table} s,
                   json_each(s.self_evaluation, '$.aiops_rule_evaluation.checks') elem
            WHERE s.created_at >= %s AND s.created_at < %s AND s.aiops_verdict IN (%s, %s)
              AND json_valid(s.self_evaluation)
              AND json_type(s.self_evaluation, '$.aiops_rule_evaluation.checks') = 'array'
              AND elem.type = 'object' AND json_type(elem.value, '$.passed') = 'false'
            GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20
        """  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(str(name or "?"), count) for name, count in cursor.fetchall()]


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
        .annotate(n=Count("pk"))
    )
    cube = {(row["verifier_verdict"], row["feedback"], row["review_judgement"]): row["n"] for row in rows}
    reviews = SessionReview.objects.filter(
        session__created_at__gte=date_range.start_at, session__created_at__lt=date_range.end_before
    ).aggregate(
        right=Count("pk", filter=Q(verifier_was_right=True)),
        wrong=Count("pk", filter=Q(verifier_was_right=False)),
    )
    return Calibration(range=date_range, cube=cube, verifier_right=reviews["right"], verifier_wrong=reviews["wrong"])
