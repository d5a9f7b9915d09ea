"""People correct the judge claim by claim in the inspector (ClaimCorrection rows)."""

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from diagnosis.models import ClaimCheck, ClaimCorrection
from tests.admin.conftest import logged_in
from tests.factories import REF_CONTENT, UserFactory, evaluated_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def low_confid(project):
    """One critical claim supported, one minor claim the judge calls unsupported."""
    return evaluated_session(project, "s-corrections", verdict="LOW_CONFID")


def _correct(client, session, **data):
    return client.post(reverse("admin:diagnosis_diagnosissession_correct_claim", args=[session.pk]), data)


def _inspector(client, session):
    return client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]))


def _unsupported_claim(session) -> ClaimCheck:
    return ClaimCheck.objects.get(session=session, verdict="UNSUPPORTED")


def test_a_correction_is_stored_with_who_what_and_the_judges_decision(reviewer_client, reviewer, low_confid):
    claim = _unsupported_claim(low_confid)

    response = _correct(
        reviewer_client, low_confid, claim_id=claim.claim_id, verdict="SUPPORTED", note=" stated in inv-1 "
    )

    assert response.status_code == 302
    assert response["Location"].endswith(f"#claim-{claim.claim_id}")
    correction = ClaimCorrection.objects.get()
    assert (correction.reviewer, correction.round, correction.claim_text) == (reviewer, claim.round, claim.text)
    assert (correction.judge_verdict, correction.verdict, correction.note) == (
        "UNSUPPORTED",
        "SUPPORTED",
        "stated in inv-1",
    )
    assert (correction.decided_by, correction.band) == (claim.decided_by, claim.band)
    assert not correction.judge_right
    assert LogEntry.objects.filter(object_id=str(low_confid.pk), change_message__contains=claim.claim_id).exists()


def test_judge_right_keeps_the_judges_verdict(reviewer_client, low_confid):
    claim = _unsupported_claim(low_confid)

    _correct(reviewer_client, low_confid, claim_id=claim.claim_id, verdict="right")

    correction = ClaimCorrection.objects.get()
    assert correction.verdict == correction.judge_verdict == "UNSUPPORTED"
    assert correction.judge_right


def test_the_next_reviewer_sees_the_newest_correction_and_how_many_came_before(reviewer_client, low_confid):
    claim = _unsupported_claim(low_confid)
    _correct(reviewer_client, low_confid, claim_id=claim.claim_id, verdict="right")
    _correct(reviewer_client, low_confid, claim_id=claim.claim_id, verdict="CONTRADICTED", note="<b>47%</b> not 57%")
    other = UserFactory(username="erin", is_staff=True)
    other.groups.add(Group.objects.get(name="Reviewer"))

    response = _inspector(logged_in(other), low_confid)

    shown = {c.claim_id: c for c in response.context["inspection"].claims}[claim.claim_id]
    assert (shown.correction.verdict, shown.corrections_before) == ("CONTRADICTED", 1)
    page = response.content.decode()
    assert "bob corrected the judge: Unsupported → Contradicted" in page
    assert "&lt;b&gt;47%&lt;/b&gt; not 57%" in page and "<b>47%</b>" not in page  # the note stays text


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"claim_id": "no-such-claim", "verdict": "SUPPORTED"}, b"no such claim"),
        ({"claim_id": "CLAIM", "verdict": "NO_EVIDENCE"}, b"NO_EVIDENCE"),
        ({"claim_id": "CLAIM", "verdict": "maybe"}, b"maybe"),
        ({"claim_id": "CLAIM"}, b"required"),
        ({"claim_id": "CLAIM", "verdict": "right", "note": "x" * 2001}, b"2000"),
    ],
)
def test_a_wrong_correction_is_refused_naming_the_problem_and_stores_nothing(reviewer_client, low_confid, data, named):
    data = {k: (_unsupported_claim(low_confid).claim_id if v == "CLAIM" else v) for k, v in data.items()}

    response = _correct(reviewer_client, low_confid, **data)

    assert response.status_code == 400
    assert named in response.content
    assert not ClaimCorrection.objects.exists()


def test_a_claim_of_an_earlier_round_cannot_be_corrected_and_its_corrections_stay(reviewer_client, low_confid):
    claim = _unsupported_claim(low_confid)
    _correct(reviewer_client, low_confid, claim_id=claim.claim_id, verdict="SUPPORTED")
    # The agent re-posts the session with more evidence: the verifier's next round replaces the checks.
    evaluated_session(
        low_confid.project, low_confid.session_id, verdict="LOW_CONFID", ref_content=REF_CONTENT + " 重启后恢复。"
    )
    assert ClaimCheck.objects.filter(session=low_confid, round__gt=claim.round).exists()

    response = _inspector(reviewer_client, low_confid)

    shown = {c.claim_id: c for c in response.context["inspection"].claims}[claim.claim_id]
    assert shown.correction.round == claim.round  # shown, said to be of the earlier round
    assert f"on verifier round {claim.round}" in response.content.decode()
    assert ClaimCorrection.objects.count() == 1


def test_only_reviewers_correct_and_only_by_post(reviewer_client, low_confid):
    viewer = UserFactory(username="vera", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))
    viewer_client = logged_in(viewer)
    claim = _unsupported_claim(low_confid)

    assert _correct(viewer_client, low_confid, claim_id=claim.claim_id, verdict="right").status_code == 403
    assert (
        reviewer_client.get(reverse("admin:diagnosis_diagnosissession_correct_claim", args=[low_confid.pk])).status_code
        == 405
    )
    assert "se-correction-form" not in _inspector(viewer_client, low_confid).content.decode()
    assert "se-correction-form" in _inspector(reviewer_client, low_confid).content.decode()
    assert not ClaimCorrection.objects.exists()


def test_the_inspector_reads_corrections_in_one_query_however_many(reviewer_client, low_confid):
    claim = _unsupported_claim(low_confid)
    _correct(reviewer_client, low_confid, claim_id=claim.claim_id, verdict="right")
    _inspector(reviewer_client, low_confid)  # warm the per-user caches
    with CaptureQueriesContext(connection) as one:
        _inspector(reviewer_client, low_confid)
    for verdict in ("SUPPORTED", "CONTRADICTED", "right", "SUPPORTED"):
        _correct(reviewer_client, low_confid, claim_id=claim.claim_id, verdict=verdict)
    with CaptureQueriesContext(connection) as five:
        _inspector(reviewer_client, low_confid)

    assert len(five) == len(one)
