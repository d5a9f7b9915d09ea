"""Database constraints of the diagnosis, feedback and cases models, proved at the database.

Every row here is written through the ORM without model validation (no full_clean), so what
refuses a wrong value is the database's own constraint, on SQLite and on PostgreSQL alike.
"""

import itertools

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from cases.models import BadCase, BadCaseStatus, Case
from diagnosis.models import (
    ClaimCheck,
    ClaimCheckRef,
    DiagnosisSession,
    DiagnosisStep,
    EvidenceRef,
    SessionReview,
    ToolInvocation,
)
from feedback.models import EndUserVote, FeedbackEvent
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

_ids = itertools.count()


def new_session(project, **fields) -> DiagnosisSession:
    values = {
        "session_id": f"s-{next(_ids)}",
        "mode": "chat",
        "query": "q",
        "status": "SUCCEEDED",
        "created_at": timezone.now(),
    } | fields
    return DiagnosisSession.objects.create(project=project, **values)


def refused(write) -> bool:
    """True when the database refuses `write` (run in a savepoint so the test can go on)."""
    try:
        with transaction.atomic():
            write()
            # Foreign keys are deferred on both databases: check them before the savepoint ends.
            connection.check_constraints()
    except IntegrityError:
        return True
    return False


@pytest.fixture
def session(project) -> DiagnosisSession:
    return new_session(project)


@pytest.fixture
def invocation(session) -> ToolInvocation:
    return ToolInvocation.objects.create(
        session=session, position=0, invocation_id="inv-1", tool_name="lookup", status="SUCCESS", match_level="L0"
    )


# --- DiagnosisSession --------------------------------------------------------------------------


def test_session_id_is_unique_within_a_project_only(project, other_project):
    new_session(project, session_id="dup")
    assert refused(lambda: new_session(project, session_id="dup"))
    new_session(other_project, session_id="dup")
    assert DiagnosisSession.objects.filter(session_id="dup").count() == 2


@pytest.mark.parametrize(
    "field, bad, good",
    [
        ("mode", "voice", "aiops"),
        ("status", "DONE", "RUNNING"),
        ("feedback", "meh", "not_useful"),
        ("verifier_verdict", "MAYBE", "LOW_CONFID"),
        ("aiops_verdict", "OK", "WARN"),
    ],
)
def test_session_choice_columns_refuse_values_outside_their_choices(project, field, bad, good):
    assert refused(lambda: new_session(project, **{field: bad}))
    assert not refused(lambda: new_session(project, **{field: good}))


def test_session_choice_columns_accept_blank_where_unset_is_meaningful(project):
    stored = new_session(project, feedback="", verifier_verdict="", aiops_verdict="")
    assert DiagnosisSession.objects.filter(pk=stored.pk).exists()


@pytest.mark.parametrize("score, ok", [(-1, False), (0, True), (100, True), (101, False), (None, True)])
def test_evidence_score_stays_within_0_to_100(project, score, ok):
    assert refused(lambda: new_session(project, evidence_score=score)) is not ok


def test_update_bypassing_the_model_is_refused_too(session):
    assert refused(lambda: DiagnosisSession.objects.filter(pk=session.pk).update(evidence_score=250))
    assert refused(lambda: DiagnosisSession.objects.filter(pk=session.pk).update(status="whatever"))
    session.refresh_from_db()
    assert session.evidence_score is None and session.status == "SUCCEEDED"


def test_needs_review_is_computed_by_the_database(session):
    DiagnosisSession.objects.filter(pk=session.pk).update(verifier_verdict="REJECT")
    assert DiagnosisSession.objects.get(pk=session.pk).needs_review is True
    DiagnosisSession.objects.filter(pk=session.pk).update(reviewed_at=timezone.now())
    assert DiagnosisSession.objects.get(pk=session.pk).needs_review is False


# --- children of a session --------------------------------------------------------------------


def test_step_index_is_unique_per_session(session, project):
    DiagnosisStep.objects.create(session=session, index=0, name="plan", status="SUCCEEDED")
    assert refused(lambda: DiagnosisStep.objects.create(session=session, index=0, name="again", status="SUCCEEDED"))
    DiagnosisStep.objects.create(session=new_session(project), index=0, name="plan", status="SUCCEEDED")


def test_invocation_id_and_position_are_unique_per_session(session, invocation):
    def create(**fields):
        values = {"session": session, "tool_name": "t", "status": "SUCCESS"} | fields
        return lambda: ToolInvocation.objects.create(**values)

    assert refused(create(position=1, invocation_id="inv-1"))
    assert refused(create(position=0, invocation_id="inv-2"))
    assert not refused(create(position=1, invocation_id="inv-2"))


@pytest.mark.parametrize("field, bad", [("status", "OK"), ("match_level", "L9")])
def test_invocation_choice_columns_are_checked(session, field, bad):
    values = {"position": 5, "invocation_id": "x", "tool_name": "t", "status": "FAILED", "match_level": ""}
    assert refused(lambda: ToolInvocation.objects.create(session=session, **(values | {field: bad})))
    assert not refused(lambda: ToolInvocation.objects.create(session=session, **values))


def test_ref_id_is_unique_per_session(session, invocation):
    def ref(position):
        return lambda: EvidenceRef.objects.create(
            session=session,
            invocation=invocation,
            position=position,
            ref_id="inv-1#1",
            content="c",
            content_sha256="0" * 64,
        )

    ref(0)()
    assert refused(ref(1))


def test_claim_check_is_unique_per_round_and_its_verdict_is_checked(session, invocation):
    def check(round_, verdict="SUPPORTED"):
        return lambda: ClaimCheck.objects.create(
            session=session, round=round_, claim_id="c1", text="t", verdict=verdict, judge="det"
        )

    check(1)()
    assert refused(check(1))
    assert not refused(check(2))
    assert refused(check(3, verdict="PROBABLY"))
    claim = ClaimCheck.objects.get(round=1)
    ref = EvidenceRef.objects.create(
        session=session, invocation=invocation, position=0, ref_id="r", content="c", content_sha256="0" * 64
    )
    ClaimCheckRef.objects.create(claim_check=claim, evidence_ref=ref)
    assert refused(lambda: ClaimCheckRef.objects.create(claim_check=claim, evidence_ref=ref))


def test_review_judgement_is_checked(session):
    reviewer = UserFactory(username="bob")
    assert refused(lambda: SessionReview.objects.create(session=session, reviewer=reviewer, judgement="fine"))
    assert not refused(lambda: SessionReview.objects.create(session=session, reviewer=reviewer, judgement="wrong"))


# --- deletion ---------------------------------------------------------------------------------


def test_deleting_a_session_cascades_its_children_in_the_database(session, invocation):
    DiagnosisStep.objects.create(session=session, index=0, name="plan", status="SUCCEEDED")
    ref = EvidenceRef.objects.create(
        session=session, invocation=invocation, position=0, ref_id="r", content="c", content_sha256="0" * 64
    )
    claim = ClaimCheck.objects.create(session=session, round=1, claim_id="c1", text="t", verdict="SUPPORTED", judge="d")
    ClaimCheckRef.objects.create(claim_check=claim, evidence_ref=ref)
    # Plain SQL, so no ORM collector helps: only the database's ON DELETE CASCADE can remove them.
    with connection.cursor() as cursor:
        table = connection.ops.quote_name(DiagnosisSession._meta.db_table)
        cursor.execute(f"DELETE FROM {table} WHERE id = %s", [session.pk])  # noqa: S608 (constant table name)
    connection.check_constraints()
    for model in (DiagnosisStep, ToolInvocation, EvidenceRef, ClaimCheck, ClaimCheckRef):
        assert not model.objects.exists(), model.__name__


def test_orm_delete_of_a_session_removes_children_and_feedback(session, invocation):
    DiagnosisStep.objects.create(session=session, index=0, name="plan", status="SUCCEEDED")
    FeedbackEvent.objects.create(session=session, value="useful", client="api_key")
    EndUserVote.objects.create(session=session, end_user_id="u1", value="useful")
    session.delete()
    connection.check_constraints()
    for model in (DiagnosisStep, ToolInvocation, FeedbackEvent, EndUserVote):
        assert not model.objects.exists(), model.__name__


def test_a_project_with_sessions_cannot_be_deleted(project, session):
    assert refused(project.delete)
    assert DiagnosisSession.objects.filter(pk=session.pk).exists()


def test_a_project_without_sessions_can_be_deleted():
    empty = ProjectFactory(slug="empty")
    assert not refused(empty.delete)


# --- feedback ---------------------------------------------------------------------------------


def test_one_vote_per_end_user_per_session(session, project):
    EndUserVote.objects.create(session=session, end_user_id="u1", value="useful")
    assert refused(lambda: EndUserVote.objects.create(session=session, end_user_id="u1", value="not_useful"))
    EndUserVote.objects.create(session=session, end_user_id="u2", value="not_useful")
    EndUserVote.objects.create(session=new_session(project), end_user_id="u1", value="useful")


@pytest.mark.parametrize("field, bad", [("value", "great"), ("client", "carrier_pigeon")])
def test_feedback_event_values_are_checked(session, field, bad):
    assert refused(
        lambda: FeedbackEvent.objects.create(session=session, **({"value": "useful", "client": "token"} | {field: bad}))
    )


def test_end_user_vote_value_is_checked(session):
    assert refused(lambda: EndUserVote.objects.create(session=session, end_user_id="u", value="great"))


# --- cases ------------------------------------------------------------------------------------


def new_case(project, session=None, **fields) -> Case:
    return Case.objects.create(project=project, session=session, title="t", **fields)


def test_one_case_per_session_while_manual_cases_have_none(project, session):
    new_case(project, session)
    assert refused(lambda: new_case(project, session))
    new_case(project, source_type="MANUAL")
    new_case(project, source_type="MANUAL")
    assert Case.objects.filter(session__isnull=True).count() == 2


@pytest.mark.parametrize("field, bad", [("status", "maybe"), ("source_type", "IMPORT"), ("fault_category", "COSMIC")])
def test_case_choice_columns_are_checked(project, field, bad):
    assert refused(lambda: new_case(project, **{field: bad}))


def new_bad_case(session, **fields) -> BadCase:
    values = {"source": "feedback"} | fields
    return BadCase.objects.create(session=session, project=session.project, **values)


@pytest.mark.parametrize("second", [BadCaseStatus.OPEN, BadCaseStatus.TRIAGED])
def test_one_open_bad_case_per_session(session, second):
    new_bad_case(session, status=BadCaseStatus.OPEN)
    assert refused(lambda: new_bad_case(session, status=second))


def test_closed_bad_cases_coexist_with_an_open_one(session):
    new_bad_case(session, status=BadCaseStatus.FIXED)
    new_bad_case(session, status=BadCaseStatus.WONT_FIX)
    new_bad_case(session, status=BadCaseStatus.TRIAGED)
    assert BadCase.objects.filter(session=session).count() == 3


def test_reopening_a_closed_bad_case_beside_an_open_one_is_refused(session):
    closed = new_bad_case(session, status=BadCaseStatus.FIXED)
    new_bad_case(session, status=BadCaseStatus.OPEN)
    assert refused(lambda: BadCase.objects.filter(pk=closed.pk).update(status=BadCaseStatus.OPEN))


@pytest.mark.parametrize("field, bad", [("status", "closed"), ("category", "typo"), ("source", "rumour")])
def test_bad_case_choice_columns_are_checked(session, field, bad):
    assert refused(lambda: new_bad_case(session, **{field: bad}))
