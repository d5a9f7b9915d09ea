"""The dashboard's and the calibration panel's page content, built from their selectors.

The admin site only routes here (`SelfEvalAdminSite.index`, `calibration_view`); every figure a
page shows comes from `reporting.selectors`, every link leads to the session list filtered to the
sessions behind that figure.
"""

import datetime as dt
from typing import Any
from urllib.parse import quote_plus, urlencode

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from backoffice.charts import Chart, Column, Series
from core.tenancy.access import Access
from diagnosis.messages import machine_label
from diagnosis.models import ClaimBand, ClaimDecider, ClaimVerdict, Feedback, ReviewJudgement, VerifierVerdict
from otlp.selectors import refusals_count
from reporting import selectors as dashboard_selectors
from reporting.claim_calibration import JUDGE_VERDICTS, PEOPLE_VERDICTS, ClaimCounts, claim_calibration_get
from reporting.selectors import DateRange, DayFigures

SESSIONS_CHANGELIST = "admin:diagnosis_diagnosissession_changelist"


def percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


class SessionListUrl:
    """`url(date_range, **lookups)`: the session list filtered to the range and the lookups."""

    def __init__(self, base: str):
        self.base = base

    def __call__(self, date_range: DateRange, **lookups: Any) -> str:
        return f"{self.base}?{urlencode({**date_range.lookups(), **lookups})}"

    def of_days(self, days: list[dt.date]) -> dict[dt.date, str]:
        """The list of each day's sessions, for a year of days at once: the bounds computed and
        quoted directly (the same URLs as `url(DateRange(day, day))`, a tenth of the cost)."""
        zone = timezone.get_current_timezone()
        bounds = {
            day: quote_plus(dt.datetime.combine(day, dt.time.min, tzinfo=zone).isoformat(sep=" "))
            for day in {*days, *(day + dt.timedelta(days=1) for day in days)}
        }
        return {
            day: f"{self.base}?created_at__gte={bounds[day]}&created_at__lt={bounds[day + dt.timedelta(days=1)]}"
            for day in days
        }


def session_list_url_for(site_name: str) -> SessionListUrl:
    return SessionListUrl(reverse(SESSIONS_CHANGELIST, current_app=site_name))


def range_context(*, start: str | None, end: str | None) -> tuple[DateRange, dict[str, Any]]:
    """The range the reviewer asked for (or the default), what was wrong with it, and the presets."""
    date_range, errors = dashboard_selectors.date_range_parse(start=start, end=end)
    messages = {
        "start": gettext("The start date is not a date (YYYY-MM-DD); showing the default range."),
        "end": gettext("The end date is not a date (YYYY-MM-DD); showing the default range."),
        "order": gettext("The start date was after the end date; the two were swapped."),
        "span": gettext("The range is limited to one year."),
    }
    today = timezone.localdate()
    presets = {
        "today": today.isoformat(),
        **{f"d{n}": (today - dt.timedelta(days=n - 1)).isoformat() for n in (7, 30, 90)},
    }
    return date_range, {"range": date_range, "range_errors": [messages[e] for e in errors], "presets": presets}


def trends_context(*, days: list[DayFigures], url: SessionListUrl) -> dict[str, Chart]:
    """The range's trends: verdict mix and useful rate per day, verifier-reviewer agreement per
    week, reviews recorded per day."""
    # Translated once here, not once per bar (the choices' labels are lazy).
    verdict_labels = {key: str(label) for key, label in VerifierVerdict.choices} | {"": gettext("No verdict")}

    day_urls = url.of_days([day.day for day in days])

    def day_url(day: DayFigures) -> str:
        return day_urls[day.day]

    verdict_mix = Chart(
        title=gettext("Verdict mix per day"),
        series=[Series((key or "none").lower(), verdict_labels[key]) for key in dashboard_selectors.VERDICTS],
        columns=[
            Column(day.day.isoformat(), [day.verdicts[key] for key in dashboard_selectors.VERDICTS], day_url(day))
            for day in days
        ],
    )
    useful_rate = Chart(
        title=gettext("Useful rate per day (of the sessions with feedback)"),
        series=[Series("useful", gettext("useful"))],
        columns=[
            Column(day.day.isoformat(), [percent(day.useful, day.useful + day.not_useful)], day_url(day))
            for day in days
        ],
        percent=True,
    )
    weeks: list[list[DayFigures]] = []
    for day in days:
        if not weeks or day.day.weekday() == 0:
            weeks.append([])
        weeks[-1].append(day)
    agreement = Chart(
        title=gettext("Verifier-reviewer agreement per week (reviews saying the verifier was right)"),
        series=[Series("agree", gettext("verifier right"))],
        columns=[
            Column(
                gettext("week of %(day)s") % {"day": week[0].day.isoformat()},
                [percent(sum(d.verifier_right for d in week), sum(d.verifier_right + d.verifier_wrong for d in week))],
                url(DateRange(week[0].day, week[-1].day), reviewed_at__isnull="False"),
            )
            for week in weeks
        ],
        percent=True,
    )
    throughput = Chart(
        title=gettext("Reviewer throughput (reviews recorded per day)"),
        series=[Series("reviews", gettext("reviews"))],
        columns=[Column(day.day.isoformat(), [day.reviews]) for day in days],
    )
    return {"verdict_mix": verdict_mix, "useful_rate": useful_rate, "agreement": agreement, "throughput": throughput}


def dashboard_context(
    *, date_range: DateRange, access: Access, trace_access: Access, url: SessionListUrl, site_name: str
) -> dict[str, Any]:
    """Every figure of the dashboard for the range, each with the link to its sessions (to its traces
    for the spans refused over OTLP)."""
    board = dashboard_selectors.dashboard_get(date_range=date_range, access=access)
    # Spans refused over OTLP: a figure of the traces, for those who may see them.
    refusals = (
        None
        if trace_access.sees_nothing
        else refusals_count(access=trace_access, since=date_range.start_at, before=date_range.end_before)
    )
    total = board.total
    verdict_labels = dict(VerifierVerdict.choices) | {"": gettext("No verdict")}
    verdicts = [
        {
            "key": (key or "none").lower(),
            "label": verdict_labels[key],
            "count": board.verdicts.get(key, 0),
            "percent": percent(board.verdicts.get(key, 0), total) or 0,
            "url": url(date_range, verifier_verdict__exact=key),
        }
        for key in dashboard_selectors.VERDICTS
    ]
    buckets = [
        {
            "label": f"{low}–{high}",
            "count": count,
            "height": percent(count, board.max_bucket) or 0,
            "url": url(date_range, evidence_score__gte=low, evidence_score__lte=high),
        }
        for low, high, count in board.score_buckets
    ]
    aiops = [
        {"check": name, "label": machine_label(name), "count": count, "url": url(date_range, aiops_failed_check=name)}
        for name, count in board.aiops_failures
    ]
    max_aiops = max((row["count"] for row in aiops), default=0)
    for row in aiops:
        row["width"] = percent(row["count"], max_aiops) or 0
    return {
        "board": board,
        "refusals": refusals,
        "trends": trends_context(days=board.days, url=url),
        "verdicts": verdicts,
        "buckets": buckets,
        "score_missing_url": url(date_range, evidence_score__isnull="True"),
        "aiops": aiops,
        "useful_rate": percent(board.useful, board.feedback_total),
        "not_useful_rate": percent(board.not_useful, board.feedback_total),
        "links": {
            "total": url(date_range),
            "useful": url(date_range, feedback__exact="useful"),
            "not_useful": url(date_range, feedback__exact="not_useful"),
            "reviewed": url(date_range, reviewed_at__isnull="False"),
            "triage": reverse("admin:backoffice_triageitem_changelist", current_app=site_name),
            "open_bad_cases": reverse("admin:cases_badcase_changelist", current_app=site_name)
            + "?status__in=open,triaged",
            "pending_cases": reverse("admin:cases_case_changelist", current_app=site_name) + "?status__exact=pending",
            "refused_traces": reverse("admin:otlp_bufferedtrace_changelist", current_app=site_name)
            + "?"
            + urlencode(
                {
                    "refused": "yes",
                    "last_rejected_at__gte": date_range.start_at.isoformat(sep=" "),
                    "last_rejected_at__lt": date_range.end_before.isoformat(sep=" "),
                }
            ),
            "calibration": reverse("admin:calibration", current_app=site_name)
            + "?"
            + urlencode({"start": date_range.start.isoformat(), "end": date_range.end.isoformat()}),
        },
    }


def calibration_context(*, date_range: DateRange, access: Access, url: SessionListUrl) -> dict[str, Any]:
    """Verifier verdict x user feedback x reviewer judgement, with the sessions behind each cell, and
    the judge against people on the corrected claims (`claims_context`)."""
    calibration = dashboard_selectors.calibration_get(date_range=date_range, access=access)
    verdict_labels = dict(VerifierVerdict.choices) | {"": gettext("No verdict")}
    feedback_labels = dict(Feedback.choices) | {"": gettext("No feedback")}
    judgement_labels = dict(ReviewJudgement.choices) | {"": gettext("Not reviewed")}

    def matrix(column_name, columns, column_labels, agrees_with):
        rows, agree_total, decided_total = [], 0, 0
        for verdict in dashboard_selectors.VERDICTS:
            cells, agree, decided = [], 0, 0
            for column in columns:
                count = calibration.cell(verdict=verdict, **{column_name: column})
                agrees = column in agrees_with.get(verdict, set())
                if column and verdict:
                    decided += count
                    agree += count if agrees else 0
                cells.append(
                    {
                        "count": count,
                        "agrees": bool(verdict and column and agrees),
                        "disagrees": bool(verdict and column and not agrees),
                        "url": url(
                            date_range,
                            verifier_verdict__exact=verdict,
                            **{
                                ("review_judgement__exact" if column_name == "judgement" else "feedback__exact"): column
                            },
                        ),
                    }
                )
            agree_total += agree
            decided_total += decided
            rows.append(
                {
                    "label": verdict_labels[verdict],
                    "cells": cells,
                    "agreement": percent(agree, decided),
                    "decided": decided,
                }
            )
        return {
            "columns": [column_labels[column] for column in columns],
            "rows": rows,
            "agreement": percent(agree_total, decided_total),
            "decided": decided_total,
        }

    # User feedback x reviewer judgement: do the users and the reviewers agree with each other?
    user_vs_reviewer = []
    for feedback in dashboard_selectors.FEEDBACKS:
        cells = []
        for judgement in dashboard_selectors.JUDGEMENTS:
            cells.append(
                {
                    "count": calibration.cell(feedback=feedback, judgement=judgement),
                    "url": url(date_range, feedback__exact=feedback, review_judgement__exact=judgement),
                }
            )
        user_vs_reviewer.append({"label": feedback_labels[feedback], "cells": cells})
    reviewed_verdicts = calibration.verifier_right + calibration.verifier_wrong
    return {
        "trends": trends_context(days=calibration.days, url=url),
        "by_feedback": matrix(
            "feedback", dashboard_selectors.FEEDBACKS, feedback_labels, dashboard_selectors.VERDICT_AGREES_WITH_FEEDBACK
        ),
        "by_judgement": matrix(
            "judgement",
            dashboard_selectors.JUDGEMENTS,
            judgement_labels,
            dashboard_selectors.VERDICT_AGREES_WITH_JUDGEMENT,
        ),
        "judgement_columns": [judgement_labels[j] for j in dashboard_selectors.JUDGEMENTS],
        "user_vs_reviewer": user_vs_reviewer,
        "verifier_right": calibration.verifier_right,
        "verifier_reviews": reviewed_verdicts,
        "verifier_right_rate": percent(calibration.verifier_right, reviewed_verdicts),
        "claims": claims_context(date_range=date_range, access=access),
    }


def claim_matrix(counts: ClaimCounts, verdict_labels: dict[str, str]) -> dict[str, Any]:
    """The judge's verdict (rows) x people's verdict (columns), with the agreement of each row."""
    rows = [
        {
            "label": verdict_labels[judge],
            "cells": [
                {"count": counts.cell(judge, people), "agrees": judge == people, "disagrees": judge != people}
                for people in PEOPLE_VERDICTS
            ],
            "agreement": percent(counts.agreed_on(judge), counts.judged(judge)),
            "decided": counts.judged(judge),
        }
        for judge in JUDGE_VERDICTS
    ]
    return {
        "columns": [verdict_labels[people] for people in PEOPLE_VERDICTS],
        "rows": rows,
        "agreed": counts.agreed,
        "decided": counts.total,
        "agreement": percent(counts.agreed, counts.total),
    }


def claims_context(*, date_range: DateRange, access: Access) -> dict[str, Any]:
    """The judge against people on the corrected claims of the range: the table, its breakdowns
    per language, per judge and per band, and the agreement per week."""
    claims = claim_calibration_get(date_range=date_range, access=access)
    verdict_labels = {key: str(label) for key, label in ClaimVerdict.choices}
    language_labels = {"zh": gettext("Chinese"), "en": gettext("English")}
    decider_labels = {key: str(label) for key, label in ClaimDecider.choices} | {"": gettext("Judge not recorded")}
    band_labels = {key: str(label) for key, label in ClaimBand.choices} | {"": gettext("Band not recorded")}

    def breakdown(title: str, groups: dict[str, ClaimCounts], labels: dict[str, str]) -> dict[str, Any]:
        order = [key for key in labels if key in groups] + sorted(key for key in groups if key not in labels)
        return {
            "title": title,
            "groups": [
                {"key": key, "label": labels.get(key, key), "matrix": claim_matrix(groups[key], verdict_labels)}
                for key in order
            ],
        }

    return {
        "matrix": claim_matrix(claims.overall, verdict_labels),
        "breakdowns": [
            breakdown(gettext("Per language of the session"), claims.by_language, language_labels),
            breakdown(gettext("Per judge (who decided the claim)"), claims.by_decider, decider_labels),
            breakdown(gettext("Per band of the judge's score"), claims.by_band, band_labels),
        ],
        "weeks": [
            {
                "label": gettext("week of %(day)s") % {"day": week.start.isoformat()},
                "total": week.total,
                "agreed": week.agreed,
                "agreement": percent(week.agreed, week.total),
            }
            for week in claims.weeks
        ],
    }
