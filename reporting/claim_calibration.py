"""The judge's verdicts against people's, claim by claim: the calibration panel's claim table.

A claim counts once, with its newest correction made up to the end of the range, and only when
that correction was made in the range: what people said of the claim by the range's end. Two
grouped queries whatever the number of corrections: the confusion counts per (language, decider,
band), from which every breakdown is summed, and the counts per day of the trend.
"""

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Count, F, OuterRef, Q, Subquery
from django.db.models.functions import TruncDate
from django.utils import timezone

from core.tenancy.access import Access
from diagnosis.models import ClaimCorrection, ClaimVerdict
from reporting.selectors import DateRange

JUDGE_VERDICTS = list(ClaimVerdict.values)  # the table's rows
# The table's columns: what a person may say, and NO_EVIDENCE, which a person can only confirm.
PEOPLE_VERDICTS = [
    ClaimVerdict.SUPPORTED,
    ClaimVerdict.UNSUPPORTED,
    ClaimVerdict.CONTRADICTED,
    ClaimVerdict.NO_EVIDENCE,
]


@dataclass
class ClaimCounts:
    """Claims per (judge's verdict, people's verdict); the judge agreed where the two are equal."""

    cells: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, judge: str, people: str, count: int) -> None:
        self.cells[(judge, people)] = self.cells.get((judge, people), 0) + count

    def cell(self, judge: str, people: str) -> int:
        return self.cells.get((judge, people), 0)

    def judged(self, judge: str) -> int:
        return sum(count for (j, _p), count in self.cells.items() if j == judge)

    def agreed_on(self, judge: str) -> int:
        return self.cell(judge, judge)

    @property
    def total(self) -> int:
        return sum(self.cells.values())

    @property
    def agreed(self) -> int:
        return sum(count for (judge, people), count in self.cells.items() if judge == people)


@dataclass
class ClaimWeek:
    start: dt.date  # the Monday, or the range's first day
    end: dt.date
    total: int = 0
    agreed: int = 0


@dataclass
class ClaimCalibration:
    range: DateRange
    overall: ClaimCounts
    by_language: dict[str, ClaimCounts]  # the session's language: zh, en
    by_decider: dict[str, ClaimCounts]  # ClaimDecider, '' when the check did not say
    by_band: dict[str, ClaimCounts]  # ClaimBand, '' when the check did not say
    weeks: list[ClaimWeek]


def claim_corrections_counted(*, date_range: DateRange, access: Access):
    """The corrections the claim table counts: per claim, the newest made before the range's end,
    when it was made in the range; only the projects `access` sees."""
    newest = (
        ClaimCorrection.objects.filter(
            session_id=OuterRef("session_id"), claim_id=OuterRef("claim_id"), created_at__lt=date_range.end_before
        )
        .order_by("-created_at", "-id")
        .values("pk")[:1]
    )
    return ClaimCorrection.objects.visible_to(access).filter(
        created_at__gte=date_range.start_at, created_at__lt=date_range.end_before, pk=Subquery(newest)
    )


def claim_calibration_get(*, date_range: DateRange, access: Access) -> ClaimCalibration:
    counted = claim_corrections_counted(date_range=date_range, access=access)
    overall, by_language, by_decider, by_band = ClaimCounts(), {}, {}, {}
    grouped = (
        counted.order_by()
        .values_list("session__language", "decided_by", "band", "judge_verdict", "verdict")
        .annotate(n=Count("pk"))
    )
    for language, decider, band, judge, people, count in grouped:
        overall.add(judge, people, count)
        by_language.setdefault(language, ClaimCounts()).add(judge, people, count)
        by_decider.setdefault(decider, ClaimCounts()).add(judge, people, count)
        by_band.setdefault(band, ClaimCounts()).add(judge, people, count)

    per_day = (
        counted.annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .order_by()
        .values_list("day")
        .annotate(total=Count("pk"), agreed=Count("pk", filter=Q(verdict=F("judge_verdict"))))
    )
    weeks: list[ClaimWeek] = []
    week_of: dict[dt.date, ClaimWeek] = {}
    for offset in range(date_range.days):
        day = date_range.start + dt.timedelta(days=offset)
        if not weeks or day.weekday() == 0:
            weeks.append(ClaimWeek(start=day, end=day))
        weeks[-1].end = day
        week_of[day] = weeks[-1]
    for day, total, agreed in per_day:
        week_of[day].total += total
        week_of[day].agreed += agreed
    return ClaimCalibration(
        range=date_range,
        overall=overall,
        by_language=by_language,
        by_decider=by_decider,
        by_band=by_band,
        weeks=weeks,
    )
