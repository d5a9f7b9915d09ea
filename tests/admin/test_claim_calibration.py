"""The calibration page sets the judge's claim verdicts against people's corrections."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from core.tenancy.access import Access
from diagnosis.models import ClaimCheck, ClaimCorrection, DiagnosisSession
from diagnosis.services.reviews import JUDGE_RIGHT, claim_correction_record
from reporting.claim_calibration import claim_calibration_get
from reporting.selectors import date_range_parse
from tests import clock
from tests.factories import UserFactory, evaluated_session, review_of

pytestmark = pytest.mark.django_db


def low_confid(project, session_id: str, *, language: str = "zh", decided_by: str = "", band: str = ""):
    """A session with one SUPPORTED and one UNSUPPORTED claim; the checks' decider and band as asked."""
    session = evaluated_session(project, session_id, verdict="LOW_CONFID")
    DiagnosisSession.objects.filter(pk=session.pk).update(language=language)
    if decided_by or band:
        ClaimCheck.objects.filter(session=session).update(decided_by=decided_by, band=band)
    return session


def claim(session, verdict: str) -> str:
    return ClaimCheck.objects.get(session=session, verdict=verdict).claim_id


def correct(session, reviewer, judge_verdict: str, verdict: str) -> ClaimCorrection:
    return claim_correction_record(
        session=session, reviewer=reviewer, claim_id=claim(session, judge_verdict), verdict=verdict
    )


def calibration_page(client, params: dict | None = None, **headers):
    response = client.get(reverse("admin:calibration"), params or {}, **headers)
    assert response.status_code == 200
    return response


def counts(matrix) -> dict[tuple[str, str], int]:
    """{(row label, column label): count} of the non-zero cells."""
    return {
        (row["label"], column): cell["count"]
        for row in matrix["rows"]
        for column, cell in zip(matrix["columns"], row["cells"], strict=True)
        if cell["count"]
    }


def test_the_claim_table_counts_the_newest_correction_of_each_claim(reviewer_client, reviewer, project):
    first = low_confid(project, "s-a")
    second = low_confid(project, "s-b")
    correct(first, reviewer, "UNSUPPORTED", "SUPPORTED")
    correct(first, reviewer, "UNSUPPORTED", JUDGE_RIGHT)  # the newest: the judge confirmed after all
    correct(first, reviewer, "SUPPORTED", "CONTRADICTED")
    correct(second, reviewer, "SUPPORTED", JUDGE_RIGHT)

    matrix = calibration_page(reviewer_client).context["claims"]["matrix"]

    assert counts(matrix) == {
        ("Unsupported", "Unsupported"): 1,
        ("Supported", "Contradicted"): 1,
        ("Supported", "Supported"): 1,
    }
    assert (matrix["agreed"], matrix["decided"], matrix["agreement"]) == (2, 3, pytest.approx(66.7))
    supported_row = matrix["rows"][0]
    assert (supported_row["decided"], supported_row["agreement"]) == (2, 50.0)


def test_a_correction_outside_the_range_is_not_counted(reviewer_client, reviewer, project):
    session = low_confid(project, "s-old")
    old = correct(session, reviewer, "UNSUPPORTED", "SUPPORTED")
    ClaimCorrection.objects.filter(pk=old.pk).update(created_at=clock.ago(days=40))
    correct(session, reviewer, "SUPPORTED", JUDGE_RIGHT)

    recent = calibration_page(reviewer_client).context["claims"]["matrix"]
    back_then = calibration_page(
        reviewer_client, {"start": clock.ago(days=41).date().isoformat(), "end": clock.ago(days=39).date().isoformat()}
    ).context["claims"]["matrix"]

    assert counts(recent) == {("Supported", "Supported"): 1}
    assert counts(back_then) == {("Unsupported", "Supported"): 1}


def test_a_later_correction_does_not_rewrite_a_past_range(reviewer, project):
    """A past range reads what people said by its end, not what they said later."""
    session = low_confid(project, "s-later")
    old = correct(session, reviewer, "UNSUPPORTED", "SUPPORTED")
    ClaimCorrection.objects.filter(pk=old.pk).update(created_at=clock.ago(days=40))
    correct(session, reviewer, "UNSUPPORTED", JUDGE_RIGHT)
    past, _ = date_range_parse(start=clock.ago(days=45).date().isoformat(), end=clock.ago(days=35).date().isoformat())

    claims = claim_calibration_get(date_range=past, access=Access.to_everything())

    assert claims.overall.cells == {("UNSUPPORTED", "SUPPORTED"): 1}


def test_another_projects_corrections_are_not_counted(reviewer, project, other_project):
    correct(low_confid(project, "s-mine"), reviewer, "SUPPORTED", JUDGE_RIGHT)
    correct(low_confid(other_project, "s-theirs"), reviewer, "UNSUPPORTED", "CONTRADICTED")
    date_range, _ = date_range_parse(start=None, end=None)

    mine = claim_calibration_get(date_range=date_range, access=Access.to_project(project.pk))
    nothing = claim_calibration_get(date_range=date_range, access=Access.to_nothing())
    everything = claim_calibration_get(date_range=date_range, access=Access.to_everything())

    assert mine.overall.cells == {("SUPPORTED", "SUPPORTED"): 1}
    assert nothing.overall.total == 0
    assert everything.overall.total == 2


def test_a_staff_user_without_the_session_permission_does_not_see_the_page(client, reviewer, project):
    correct(low_confid(project, "s-hidden"), reviewer, "SUPPORTED", JUDGE_RIGHT)
    client.force_login(UserFactory(username="erin", is_staff=True))

    assert client.get(reverse("admin:calibration")).status_code == 403


def test_breakdowns_per_language_judge_and_band(reviewer_client, reviewer, project):
    chinese = low_confid(project, "s-zh", language="zh", decided_by="llm", band="undecided")
    english = low_confid(project, "s-en", language="en", decided_by="deterministic", band="supported")
    correct(chinese, reviewer, "SUPPORTED", JUDGE_RIGHT)
    correct(chinese, reviewer, "UNSUPPORTED", "SUPPORTED")
    correct(english, reviewer, "SUPPORTED", JUDGE_RIGHT)

    breakdowns = calibration_page(reviewer_client).context["claims"]["breakdowns"]

    figures = [
        {group["label"]: (group["matrix"]["agreed"], group["matrix"]["decided"]) for group in breakdown["groups"]}
        for breakdown in breakdowns
    ]
    assert figures == [
        {"Chinese": (1, 2), "English": (1, 1)},
        {"Deterministic judge": (1, 1), "LLM judge": (1, 2)},
        {"Supported": (1, 1), "Undecided": (1, 2)},
    ]
    llm = next(group for group in breakdowns[1]["groups"] if group["key"] == "llm")
    assert counts(llm["matrix"]) == {("Supported", "Supported"): 1, ("Unsupported", "Supported"): 1}


def test_the_weekly_trend_counts_the_corrections_of_each_week(reviewer_client, reviewer, project):
    session = low_confid(project, "s-trend")
    old = correct(session, reviewer, "UNSUPPORTED", "SUPPORTED")
    ClaimCorrection.objects.filter(pk=old.pk).update(created_at=clock.ago(days=20))
    correct(session, reviewer, "SUPPORTED", JUDGE_RIGHT)

    weeks = calibration_page(reviewer_client).context["claims"]["weeks"]

    assert sum(week["total"] for week in weeks) == 2
    assert [(w["total"], w["agreed"]) for w in weeks if w["total"]] == [(1, 0), (1, 1)]
    assert weeks[-1]["agreement"] == 100.0


def test_the_page_defines_both_agreement_figures(reviewer_client, reviewer, project):
    session = low_confid(project, "s-defined")
    correct(session, reviewer, "SUPPORTED", JUDGE_RIGHT)
    correct(session, reviewer, "UNSUPPORTED", "SUPPORTED")
    review_of(session, reviewer, judgement="partly_correct", verifier_was_right=True)
    review_of(
        evaluated_session(project, "s-wrong", verdict="REJECT"), reviewer, judgement="wrong", verifier_was_right=False
    )

    html = calibration_page(reviewer_client).content.decode()
    chinese = calibration_page(reviewer_client, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "The judge agreed with people on 1 of 2 corrected claims (50.0%)</p>" in html
    assert "Reviewers said the verifier's verdict was right in 1 of 2 reviews (50.0%)</p>" in html
    assert "a session reviewed twice counts twice" in html
    assert "判定器与人工一致" in chinese and "逐周" in chinese


def test_the_page_query_count_does_not_grow_with_corrections(reviewer_client, reviewer, project):
    first = low_confid(project, "s-q-0")
    correct(first, reviewer, "SUPPORTED", JUDGE_RIGHT)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            calibration_page(reviewer_client)
        return len(captured)

    one = queries()
    for index in range(1, 4):
        session = low_confid(project, f"s-q-{index}", language="en", decided_by="llm", band="contradicted")
        correct(session, reviewer, "SUPPORTED", "CONTRADICTED")
        correct(session, reviewer, "UNSUPPORTED", JUDGE_RIGHT)
        correct(session, reviewer, "UNSUPPORTED", "SUPPORTED")

    assert queries() == one
