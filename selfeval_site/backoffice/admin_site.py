"""The SelfEval admin site: the dashboard is the index; the calibration panel sits beside it."""

import datetime as dt
from urllib.parse import urlencode

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from diagnosis.models import Feedback, ReviewJudgement, VerifierVerdict
from selfeval_site.backoffice import dashboard as dashboard_selectors

SESSIONS_CHANGELIST = "admin:diagnosis_diagnosissession_changelist"
# Strings new in Django 6 that its zh-hans catalogue does not translate yet (the blank choice of
# every select, the date hierarchy's label); listing them here puts them in our catalogue, which
# Django consults first.
gettext_noop("- Select an option -")
gettext_noop("Filter by %(field_name)s")

# Which user feedback / reviewer judgement each verdict predicts; used for agreement rates.
_VERDICT_AGREES_WITH_FEEDBACK = {"PASS": {"useful"}, "LOW_CONFID": {"not_useful"}, "REJECT": {"not_useful"}}
_VERDICT_AGREES_WITH_JUDGEMENT = {
    "PASS": {"correct"},
    "LOW_CONFID": {"partly_correct", "wrong"},
    "REJECT": {"wrong"},
}


def _percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


class SelfEvalAdminSite(admin.AdminSite):
    site_header = _("SelfEval")
    site_title = _("SelfEval admin")
    index_title = _("Dashboard")
    index_template = "admin/selfeval/dashboard.html"
    # The top navigation and the dashboard's table list replace the sidebar, leaving lists the width.
    enable_nav_sidebar = False
    site_url = None  # "/" only redirects back here

    def get_urls(self):
        urls = [
            path("calibration/", self.admin_view(self.calibration_view), name="calibration"),
        ]
        return urls + super().get_urls()

    def _session_list_url(self, date_range, **lookups) -> str:
        params = {**date_range.lookups(), **lookups}
        return f"{reverse(SESSIONS_CHANGELIST, current_app=self.name)}?{urlencode(params)}"

    def _range_from(self, request):
        date_range, errors = dashboard_selectors.date_range_parse(
            start=request.GET.get("start"), end=request.GET.get("end")
        )
        messages = {
            "start": gettext("The start date is not a date (YYYY-MM-DD); showing the default range."),
            "end": gettext("The end date is not a date (YYYY-MM-DD); showing the default range."),
            "order": gettext("The start date was after the end date; the two were swapped."),
            "span": gettext("The range is limited to one year."),
        }
        return date_range, [messages[error] for error in errors]

    def _range_context(self, request) -> tuple:
        date_range, errors = self._range_from(request)
        today = timezone.localdate()
        presets = {
            "today": today.isoformat(),
            **{f"d{n}": (today - dt.timedelta(days=n - 1)).isoformat() for n in (7, 30, 90)},
        }
        return date_range, {"range": date_range, "range_errors": errors, "presets": presets}

    def _require_session_view(self, request) -> None:
        if not request.user.has_perm("diagnosis.view_diagnosissession"):
            raise PermissionDenied

    def index(self, request, extra_context=None):
        """The dashboard. Users without access to sessions get Django's plain app list."""
        if not request.user.has_perm("diagnosis.view_diagnosissession"):
            return super().index(request, extra_context)
        date_range, range_context = self._range_context(request)
        board = dashboard_selectors.dashboard_get(date_range=date_range)
        url = self._session_list_url
        total = board.total
        per_day = [
            {
                "day": day.day,
                "total": day.total,
                "height": _percent(day.total, board.max_day_total) or 0,
                "url": url(
                    dashboard_selectors.DateRange(day.day, day.day),
                ),
            }
            for day in board.days
        ]
        verdict_labels = dict(VerifierVerdict.choices) | {"": gettext("No verdict")}
        verdicts = [
            {
                "key": (key or "none").lower(),
                "label": verdict_labels[key],
                "count": board.verdicts.get(key, 0),
                "percent": _percent(board.verdicts.get(key, 0), total) or 0,
                "url": url(date_range, verifier_verdict__exact=key),
            }
            for key in dashboard_selectors.VERDICTS
        ]
        buckets = [
            {
                "label": f"{low}–{high}",
                "count": count,
                "height": _percent(count, board.max_bucket) or 0,
                "url": url(date_range, evidence_score__gte=low, evidence_score__lte=high),
            }
            for low, high, count in board.score_buckets
        ]
        aiops = [
            {"check": name, "count": count, "url": url(date_range, aiops_failed_check=name)}
            for name, count in board.aiops_failures
        ]
        max_aiops = max((row["count"] for row in aiops), default=0)
        for row in aiops:
            row["width"] = _percent(row["count"], max_aiops) or 0
        context = {
            **self.each_context(request),
            "title": gettext("Dashboard"),
            "app_list": self.get_app_list(request),
            "board": board,
            "cache_minutes": dashboard_selectors.DAY_CACHE_SECONDS // 60,
            **range_context,
            "per_day": per_day,
            "verdicts": verdicts,
            "buckets": buckets,
            "score_missing_url": url(date_range, evidence_score__isnull="True"),
            "aiops": aiops,
            "useful_rate": _percent(board.useful, board.feedback_total),
            "not_useful_rate": _percent(board.not_useful, board.feedback_total),
            "links": {
                "total": url(date_range),
                "useful": url(date_range, feedback__exact="useful"),
                "not_useful": url(date_range, feedback__exact="not_useful"),
                "needs_review": url(date_range, needs_review="1"),
                "reviewed": url(date_range, reviewed_at__isnull="False"),
                "triage": reverse("admin:backoffice_triageitem_changelist", current_app=self.name),
                "open_bad_cases": reverse("admin:cases_badcase_changelist", current_app=self.name)
                + "?status__in=open,triaged",
                "pending_cases": reverse("admin:cases_case_changelist", current_app=self.name)
                + "?status__exact=pending",
                "calibration": reverse("admin:calibration", current_app=self.name)
                + "?"
                + urlencode({"start": date_range.start.isoformat(), "end": date_range.end.isoformat()}),
            },
            **(extra_context or {}),
        }
        request.current_app = self.name
        return TemplateResponse(request, self.index_template, context)

    def calibration_view(self, request):
        """Verifier verdict x user feedback x reviewer judgement, with the sessions behind each cell."""
        self._require_session_view(request)
        date_range, range_context = self._range_context(request)
        calibration = dashboard_selectors.calibration_get(date_range=date_range)
        url = self._session_list_url
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
                                    (
                                        "review_judgement__exact" if column_name == "judgement" else "feedback__exact"
                                    ): column
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
                        "agreement": _percent(agree, decided),
                        "decided": decided,
                    }
                )
            return {
                "columns": [column_labels[column] for column in columns],
                "rows": rows,
                "agreement": _percent(agree_total, decided_total),
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
        context = {
            **self.each_context(request),
            "title": gettext("Calibration: does the verifier agree with users and reviewers?"),
            **range_context,
            "by_feedback": matrix(
                "feedback", dashboard_selectors.FEEDBACKS, feedback_labels, _VERDICT_AGREES_WITH_FEEDBACK
            ),
            "by_judgement": matrix(
                "judgement", dashboard_selectors.JUDGEMENTS, judgement_labels, _VERDICT_AGREES_WITH_JUDGEMENT
            ),
            "judgement_columns": [judgement_labels[j] for j in dashboard_selectors.JUDGEMENTS],
            "user_vs_reviewer": user_vs_reviewer,
            "verifier_right": calibration.verifier_right,
            "verifier_wrong": calibration.verifier_wrong,
            "verifier_right_rate": _percent(calibration.verifier_right, reviewed_verdicts),
        }
        request.current_app = self.name
        return TemplateResponse(request, "admin/selfeval/calibration.html", context)
