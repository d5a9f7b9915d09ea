"""Every write service keeps the day rollups exact: after each one, the dashboard's figures of every
day equal a full recount of the sessions.

Each write below changes what a stored past day counts (the dashboard counts today live, so only
a past day can go stale); the test reads the dashboard first (the rollups are stored and their
marks settled), runs the write through its real service, reads again and compares. A write that
does not send `diagnosis.signals.figures_changed` leaves its day stale and fails here. A new write
service gets its line in WRITES.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import time_machine
from django.contrib.auth.models import Group

from backoffice.decisions import decision_import_lines
from diagnosis.models import DiagnosisSession
from diagnosis.services.evaluation import (
    session_evaluate,
    session_evaluation_record_failure,
    session_evaluation_request,
)
from diagnosis.services.retention import sessions_purge
from diagnosis.services.reviews import claim_correction_record
from diagnosis.services.transfer import session_export_lines, session_import_lines
from tests import clock
from tests.factories import (
    UserFactory,
    diagnosis_payload,
    evaluated_session,
    feedback_of,
    review_of,
    session_ingest,
)
from tests.otlp.conftest import export
from tests.otlp.sdk import Recorder, openinference_agent, protobuf_body
from tests.reporting.recount import dashboard_days, recounted_days

pytestmark = pytest.mark.django_db

PAST = 3  # days ago: the stored day the writes change
RANGE_DAYS = 7


@dataclass
class World:
    project: object
    api: object
    reviewer: object
    steady: DiagnosisSession  # evaluated, PASS, PAST days ago
    unevaluated: DiagnosisSession  # ingested PAST days ago, never evaluated


# --- the writes -------------------------------------------------------------------------------------


def ingest_through_the_api(world: World) -> None:
    payload = diagnosis_payload("s-api", created_at=clock.ago(days=PAST, hours=1))
    assert world.api.post("/api/sessions", payload, format="json").status_code == 201


def repost_moving_the_session_to_another_day(world: World) -> None:
    """The day it leaves and the day it joins both change."""
    payload = diagnosis_payload("s-steady", created_at=clock.ago(days=PAST + 2))
    assert world.api.post("/api/sessions", payload, format="json").status_code == 200


def ingest_a_batch(world: World) -> None:
    items = [diagnosis_payload(f"s-batch-{n}", created_at=clock.ago(days=PAST, hours=n)) for n in (1, 2)]
    response = world.api.post("/api/sessions/batch", items, format="json")
    assert response.status_code == 200, response.content


def ingest_an_otlp_trace(world: World) -> None:
    recorder = Recorder()
    with time_machine.travel(clock.ago(days=PAST), tick=False):
        openinference_agent(recorder.tracer, session_id="s-otlp")
    assert export(world.api, protobuf_body(recorder.take())).status_code == 200
    assert DiagnosisSession.objects.filter(session_id="s-otlp").exists()


def evaluate(world: World) -> None:
    session_evaluate(session_pk=world.unevaluated.pk)


def vote(world: World) -> None:
    feedback_of(world.steady, "not_useful")


def vote_through_the_api(world: World) -> None:
    body = {"sessionId": world.steady.session_id, "feedback": "useful"}
    assert world.api.post("/api/feedback", body, format="json").status_code == 200


def review(world: World) -> None:
    review_of(world.steady, world.reviewer, judgement="wrong", verifier_was_right=False)


def import_an_export_with_a_new_verdict_on_another_day(world: World) -> None:
    exported = json.loads(next(session_export_lines(sessions=DiagnosisSession.objects.filter(pk=world.steady.pk))))
    exported["createdAt"] = clock.iso(clock.ago(days=PAST + 1))
    exported["selfEvaluation"]["verifier_evaluation"]["verdict"] = "REJECT"
    outcomes = list(session_import_lines(project=world.project, lines=[json.dumps(exported).encode()]))
    assert [outcome.error for outcome in outcomes] == [""]


def import_decisions_reviewing_a_past_session(world: World) -> None:
    """The session's review state and a review by a person the database does not know yet."""
    reviewed_at = clock.iso(clock.ago(days=1))
    records = [
        {
            "kind": "session_state",
            "project": world.project.slug,
            "sessionId": "s-steady",
            "feedback": "not_useful",
            "reviewedAt": reviewed_at,
            "reviewJudgement": "wrong",
        },
        {
            "kind": "review",
            "project": world.project.slug,
            "sessionId": "s-steady",
            "reviewer": "erin",
            "judgement": "wrong",
            "verifierWasRight": False,
            "verifierVerdict": "PASS",
            "notes": "",
            "createdAt": reviewed_at,
        },
    ]
    report = decision_import_lines(lines=[json.dumps(record).encode() for record in records])
    assert report.errors == [] and report.stored.total() == 2


def purge(world: World) -> None:
    """The sessions of PAST days ago and older go (s-reject's open bad case, untriaged, goes with it)."""
    report = sessions_purge(older_than_days=PAST - 1)
    assert report.removed["diagnosis.DiagnosisSession"] == 3


WRITES: dict[str, Callable[[World], None]] = {
    "ingestion": ingest_through_the_api,
    "re-post": repost_moving_the_session_to_another_day,
    "batch": ingest_a_batch,
    "otlp": ingest_an_otlp_trace,
    "evaluation": evaluate,
    "vote": vote,
    "vote api": vote_through_the_api,
    "review": review,
    "import": import_an_export_with_a_new_verdict_on_another_day,
    "import decisions": import_decisions_reviewing_a_past_session,
    "purge": purge,
}


@pytest.fixture
def world(project, api) -> World:
    reviewer = UserFactory(username="bob", is_staff=True)
    reviewer.groups.add(Group.objects.get(name="Reviewer"))
    steady = evaluated_session(project, "s-steady", verdict="PASS", created_at=clock.ago(days=PAST))
    evaluated_session(project, "s-reject", verdict="REJECT", created_at=clock.ago(days=PAST + 1))
    evaluated_session(project, "s-today", verdict="PASS", created_at=clock.ago(minutes=5))
    unevaluated = session_ingest(project, diagnosis_payload("s-unevaluated", created_at=clock.ago(days=PAST)))
    return World(project=project, api=api, reviewer=reviewer, steady=steady, unevaluated=unevaluated)


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_the_dashboard_equals_a_full_recount_after_each_write(world, write):
    before = dashboard_days(days=RANGE_DAYS)  # stores the past days and settles every mark so far
    assert before == recounted_days(days=RANGE_DAYS)

    write(world)

    after = recounted_days(days=RANGE_DAYS)
    changed = {day for day in after if after[day] != before[day]}
    assert changed - {clock.now().date()}, "the write changed no stored day: the test would prove nothing"
    assert dashboard_days(days=RANGE_DAYS) == after


@pytest.mark.parametrize(
    "write",
    [
        lambda world: session_evaluation_request(session_pks=[world.steady.pk]),
        lambda world: session_evaluation_record_failure(session_pk=world.steady.pk, error="boom"),
        lambda world: claim_correction_record(
            session=world.steady, reviewer=world.reviewer, claim_id="c1", verdict="UNSUPPORTED"
        ),
    ],
    ids=["evaluation request", "evaluation failure", "claim correction"],
)
def test_writes_of_what_no_day_counts_leave_the_figures_as_they_are(world, write):
    """The evaluation state is not counted (the triage queue's count is read live), nor are claim
    corrections (the calibration page reads them live): no mark needed."""
    before = dashboard_days(days=RANGE_DAYS)

    write(world)

    assert recounted_days(days=RANGE_DAYS) == before
    assert dashboard_days(days=RANGE_DAYS) == before
