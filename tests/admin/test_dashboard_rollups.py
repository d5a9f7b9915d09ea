"""The dashboard reads past days from the per-day rollups, which follow every change of what they count."""

import datetime as dt

import pytest
from django.core.management import call_command
from django.template.loader import render_to_string
from django.urls import reverse

from backoffice.charts import Chart, Column, Series
from backoffice.pages import session_list_url_for
from core.tenancy.access import Access
from reporting.counting import cube_index
from reporting.models import SessionDay, SessionDayChange
from reporting.selectors import DateRange, dashboard_get
from reporting.services.session_days import session_days_settle
from tests import clock
from tests.concurrency import at_once
from tests.factories import (
    diagnosis_payload,
    evaluated_session,
    feedback_of,
    review_of,
    session_ingest_evaluated,
)

pytestmark = pytest.mark.django_db


def day_of(board, day: dt.date):
    return next(figures for figures in board.days if figures.day == day)


def rollups() -> list[tuple]:
    return sorted(
        (row.project_id, row.day, row.sessions, row.reviewed, row.score_missing, row.score_buckets,
         row.cube, row.aiops_failures, row.verifier_right, row.verifier_wrong, row.reviews)
        for row in SessionDay.objects.all()
    )  # fmt: skip


def test_a_past_day_follows_reevaluation_feedback_and_review(reviewer_client, reviewer, project):
    three_days_ago = clock.ago(days=3)
    day, today = three_days_ago.date(), clock.now().date()
    evaluated_session(project, "s-moving", verdict="PASS", created_at=three_days_ago)
    evaluated_session(project, "s-steady", verdict="PASS", created_at=three_days_ago)

    def board():
        return reviewer_client.get(reverse("admin:index")).context["board"]

    past = day_of(board(), day)
    assert (past.total, past.verdicts["PASS"], past.verdicts["REJECT"]) == (2, 2, 0)
    assert board().needs_review == 0

    # Re-posted with new content, re-evaluated: the verdict changes, the past day follows.
    moving = session_ingest_evaluated(
        project, diagnosis_payload("s-moving", verdict="REJECT", created_at=three_days_ago)
    )
    assert moving.verifier_verdict == "REJECT"
    past = day_of(board(), day)
    assert (past.total, past.verdicts["PASS"], past.verdicts["REJECT"]) == (2, 1, 1)
    assert board().needs_review == 1

    feedback_of(moving, "not_useful")
    past = day_of(board(), day)
    assert (past.useful, past.not_useful) == (0, 1)

    review_of(moving, reviewer, judgement="wrong", verifier_was_right=True)
    after = board()
    past = day_of(after, day)
    assert (past.reviewed, past.verifier_right, past.verifier_wrong) == (1, 1, 0)
    assert past.cell(verdict="REJECT", feedback="not_useful", judgement="wrong") == 1
    assert after.needs_review == 0
    # Throughput counts the review on the day it was recorded, not on the session's day.
    assert (past.reviews, day_of(after, today).reviews) == (0, 1)

    # What the services kept is what a rebuild from scratch computes.
    kept = rollups()
    call_command("rollups_rebuild", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert rollups() == kept


def test_past_days_come_from_the_rollups_and_the_command_rebuilds_them(reviewer_client, project):
    evaluated_session(project, "s-old", verdict="REJECT", created_at=clock.ago(days=5))
    evaluated_session(project, "s-now", verdict="PASS", created_at=clock.ago(seconds=30))
    # As after a bulk load that bypassed the services: no rollups and no change marks.
    SessionDay.objects.all().delete()
    SessionDayChange.objects.all().delete()

    board = reviewer_client.get(reverse("admin:index")).context["board"]
    assert board.total == 1  # today is counted live; the past day has no rollup yet

    call_command("rollups_rebuild", stdout=open("/dev/null", "w"))  # noqa: SIM115
    board = reviewer_client.get(reverse("admin:index")).context["board"]
    assert (board.total, board.verdicts["REJECT"], board.verdicts["PASS"]) == (2, 1, 1)


def test_a_changed_day_is_recounted_when_read_and_its_marks_are_settled(reviewer_client, project):
    session = evaluated_session(project, "s-old", verdict="PASS", created_at=clock.ago(days=3))
    reviewer_client.get(reverse("admin:index"))
    assert not SessionDayChange.objects.exists()  # the read settled the marks of ingestion and evaluation
    stored = SessionDay.objects.get(project=project)
    assert stored.sessions == 1

    feedback_of(session, "not_useful")  # a later change to a past day writes a mark, not the rollup
    assert SessionDayChange.objects.filter(project=project, day=stored.day).exists()
    assert SessionDay.objects.get(pk=stored.pk).cube == stored.cube

    board = reviewer_client.get(reverse("admin:index")).context["board"]
    assert board.totals.not_useful == 1
    assert not SessionDayChange.objects.exists()


def test_figures_are_per_project(project, other_project):
    evaluated_session(project, "s-a", verdict="PASS", created_at=clock.ago(days=2))
    evaluated_session(other_project, "s-b", verdict="REJECT", created_at=clock.ago(days=2))
    evaluated_session(other_project, "s-c", verdict="REJECT", created_at=clock.ago(seconds=30))
    today = clock.now().date()
    week = DateRange(today - dt.timedelta(days=6), today)

    mine = dashboard_get(date_range=week, access=Access.to_project(project.pk))
    theirs = dashboard_get(date_range=week, access=Access.to_project(other_project.pk))
    everything = dashboard_get(date_range=week, access=Access.to_everything())
    nothing = dashboard_get(date_range=week, access=Access.to_nothing())

    assert (mine.total, mine.verdicts["PASS"], mine.needs_review) == (1, 1, 0)
    assert (theirs.total, theirs.verdicts["REJECT"], theirs.needs_review) == (2, 2, 2)
    assert (everything.total, everything.needs_review) == (3, 2)
    assert (nothing.total, nothing.needs_review) == (0, 0)


def test_need_review_on_the_dashboard_is_the_triage_queue_count(reviewer_client, reviewer, project):
    evaluated_session(project, "s-reject", verdict="REJECT")
    evaluated_session(project, "s-low", verdict="LOW_CONFID")
    evaluated_session(project, "s-voted-down", verdict="PASS", feedback="not_useful")
    evaluated_session(project, "s-fine", verdict="PASS", feedback="useful")
    # Older than the dashboard's default 30 days: still waiting in the queue, so still counted.
    evaluated_session(project, "s-old-reject", verdict="REJECT", created_at=clock.ago(days=45))
    review_of(evaluated_session(project, "s-reviewed", verdict="REJECT"), reviewer, judgement="wrong")

    board = reviewer_client.get(reverse("admin:index")).context["board"]
    queue = reviewer_client.get(reverse("admin:backoffice_triageitem_changelist")).context["cl"]

    assert board.needs_review == queue.result_count == 4


def test_trends_are_svg_with_a_table_in_both_languages(reviewer_client, reviewer, project):
    evaluated_session(project, "s-1", verdict="PASS", feedback="useful", created_at=clock.ago(days=1))
    review_of(evaluated_session(project, "s-2", verdict="REJECT"), reviewer, judgement="wrong", verifier_was_right=True)

    english = reviewer_client.get(reverse("admin:index")).content.decode()
    chinese = reviewer_client.get(reverse("admin:calibration"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    for title in ("Verdict mix per day", "Useful rate per day", "Verifier-reviewer agreement per week"):
        assert title in english
    assert english.count('<svg class="se-chart-svg"') == 4
    assert english.count('<details class="se-chart-table">') == 4
    assert '<script src="http' not in english
    for title in ("每日结论分布", "每日有用率", "每周验证器与审核员一致率", "审核吞吐量"):
        assert title in chinese
    assert "以表格显示数据" in chinese


def test_chart_labels_are_escaped():
    chart = Chart(
        title='<script>alert("t")</script>',
        series=[Series("reviews", "<b>bold</b>")],
        columns=[Column('2026-01-01"><img src=x onerror=alert(1)>', [3])],
    )
    html = render_to_string("admin/selfeval/chart.html", {"chart": chart})

    assert "<script>" not in html and "<b>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x" in html


def test_day_links_are_the_session_list_of_each_day():
    url = session_list_url_for("admin")
    days = [clock.now().date() - dt.timedelta(days=offset) for offset in range(3)]

    assert url.of_days(days) == {day: url(DateRange(day, day)) for day in days}


@pytest.mark.postgres
# The roles come from a migration: the flush after this test must bring them back for the next one.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_concurrent_votes_on_one_day_leave_its_rollup_exact(project):
    sessions = [
        evaluated_session(project, f"s-{n}", verdict="PASS", created_at=clock.ago(days=2, minutes=n)) for n in range(4)
    ]

    _, errors = at_once(lambda session: feedback_of(session, "not_useful"), sessions)

    assert not errors, errors
    assert SessionDayChange.objects.filter(project=project, day=clock.ago(days=2).date()).count() >= 4
    session_days_settle(first=clock.ago(days=2).date(), last=clock.ago(days=2).date())  # as the dashboard does
    day = SessionDay.objects.get(project=project, day=clock.ago(days=2).date())
    # Every vote left its mark; the settle counted after all of them committed: no vote is lost.
    assert day.cube[cube_index("PASS", "not_useful", "")] == 4
    kept = rollups()
    call_command("rollups_rebuild", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert rollups() == kept
