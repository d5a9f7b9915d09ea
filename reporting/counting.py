"""The recount: what a day of sessions counts, computed from the diagnosis data.

The stored rollups (`reporting.models.SessionDay`) are rows this returns; the dashboard reads
today through it live. Days are calendar days of TIME_ZONE.
"""

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, Q
from django.db.models.functions import TruncDate

from core.tenancy.access import Access
from diagnosis.models import (
    AiOpsCheck,
    AiOpsVerdict,
    DiagnosisSession,
    Feedback,
    ReviewJudgement,
    SessionReview,
    VerifierVerdict,
)
from reporting.models import SessionDay

# Evidence-score buckets of the dashboard's histogram: 0-9, 10-19, ..., 90-100.
SCORE_BUCKETS = [(low, low + 9 if low < 90 else 100) for low in range(0, 100, 10)]
# The axes of a day's cube (verdict x feedback x reviewer judgement, "" for none), in the order of
# `SessionDay.cube`, a flat list: the cell of (v, f, j) is at cube_index(v, f, j).
CUBE_VERDICTS = [*VerifierVerdict.values, ""]
CUBE_FEEDBACKS = [*Feedback.values, ""]
CUBE_JUDGEMENTS = [*ReviewJudgement.values, ""]
CUBE_SIZE = len(CUBE_VERDICTS) * len(CUBE_FEEDBACKS) * len(CUBE_JUDGEMENTS)


def cube_index(verdict: str, feedback: str, judgement: str) -> int:
    """The cell of a session's (verdict, feedback, judgement); a value outside the axes counts as none."""

    def position(axis: list[str], value: str) -> int:
        return axis.index(value) if value in axis else len(axis) - 1

    return (position(CUBE_VERDICTS, verdict) * len(CUBE_FEEDBACKS) + position(CUBE_FEEDBACKS, feedback)) * len(
        CUBE_JUDGEMENTS
    ) + position(CUBE_JUDGEMENTS, judgement)


def session_days_zone() -> ZoneInfo:
    """The zone whose calendar days the rollups count: the site's TIME_ZONE."""
    return ZoneInfo(settings.TIME_ZONE)


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """[start, end) of a calendar day in the rollups' zone."""
    zone = session_days_zone()
    return (
        datetime.combine(day, time.min, tzinfo=zone),
        datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone),
    )


def session_days_compute(
    *, access: Access, first: date, last: date, project_ids: Iterable[int] | None = None
) -> dict[tuple[int, date], SessionDay]:
    """The rollup rows of the days first..last, computed from the sessions (unsaved, one per
    (project, day) with anything to count), in four grouped queries whatever the range.

    The dashboard reads today through this; the rollup service stores what it returns.
    """
    zone = session_days_zone()
    start_at, _ = day_bounds(first)
    _, end_before = day_bounds(last)
    sessions = DiagnosisSession.objects.visible_to(access).filter(created_at__gte=start_at, created_at__lt=end_before)
    reviews = SessionReview.objects.visible_to(access)
    if project_ids is not None:
        project_ids = list(project_ids)
        sessions = sessions.filter(project_id__in=project_ids)
        reviews = reviews.filter(session__project_id__in=project_ids)
    rows: dict[tuple[int, date], SessionDay] = {}

    def row(project_id: int, day: date) -> SessionDay:
        key = (project_id, day)
        if key not in rows:
            rows[key] = SessionDay(
                project_id=project_id,
                day=day,
                score_buckets=[0] * len(SCORE_BUCKETS),
                cube=[0] * CUBE_SIZE,
                aiops_failures={},
            )
        return rows[key]

    # COUNT(created_at): every column read is in the session_created_dashboard index (index-only scan).
    buckets = {
        f"score_{low}": Count("created_at", filter=Q(evidence_score__gte=low, evidence_score__lte=high))
        for low, high in SCORE_BUCKETS
    }
    grouped = (
        sessions.annotate(day=TruncDate("created_at", tzinfo=zone))
        .order_by()
        .values("project_id", "day", "verifier_verdict", "feedback", "review_judgement")
        .annotate(
            n=Count("created_at"),
            done=Count("created_at", filter=Q(reviewed_at__isnull=False)),
            unscored=Count("created_at", filter=Q(evidence_score__isnull=True)),
            **buckets,
        )
    )
    for group in grouped:
        target = row(group["project_id"], group["day"])
        target.sessions += group["n"]
        target.reviewed += group["done"]
        target.score_missing += group["unscored"]
        for index, (low, _high) in enumerate(SCORE_BUCKETS):
            target.score_buckets[index] += group[f"score_{low}"]
        target.cube[cube_index(group["verifier_verdict"], group["feedback"], group["review_judgement"])] += group["n"]

    # A failed check makes the AIOps verdict WARN or FAIL: only those sessions' checks are read.
    failed = (
        AiOpsCheck.objects.filter(
            passed=False,
            session__in=sessions.filter(aiops_verdict__in=[AiOpsVerdict.WARN, AiOpsVerdict.FAIL]),
        )
        .annotate(day=TruncDate("session__created_at", tzinfo=zone))
        .order_by()
        .values_list("session__project_id", "day", "name")
        .annotate(n=Count("pk"))
    )
    for project_id, day, name, count in failed:
        row(project_id, day).aiops_failures[name] = count

    by_session_day = (
        reviews.filter(session__created_at__gte=start_at, session__created_at__lt=end_before)
        .annotate(day=TruncDate("session__created_at", tzinfo=zone))
        .order_by()
        .values_list("session__project_id", "day")
        .annotate(
            right=Count("pk", filter=Q(verifier_was_right=True)),
            wrong=Count("pk", filter=Q(verifier_was_right=False)),
        )
    )
    for project_id, day, right, wrong in by_session_day:
        target = row(project_id, day)
        target.verifier_right, target.verifier_wrong = right, wrong

    recorded = (
        reviews.filter(created_at__gte=start_at, created_at__lt=end_before)
        .annotate(day=TruncDate("created_at", tzinfo=zone))
        .order_by()
        .values_list("session__project_id", "day")
        .annotate(n=Count("pk"))
    )
    for project_id, day, count in recorded:
        row(project_id, day).reviews = count
    return rows
