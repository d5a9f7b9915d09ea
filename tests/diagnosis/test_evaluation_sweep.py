from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from diagnosis.models import DiagnosisSession
from diagnosis.services.evaluation import session_evaluate
from diagnosis.services.evaluation_sweep import SweepResult, evaluation_sweep
from tests import clock
from tests.factories import aiops_payload, chat_payload, session_ingest, session_ingest_evaluated

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
TASK_PATH = "diagnosis.tasks.evaluate_session"
PENDING_AFTER = timedelta(minutes=10)
STUCK_AFTER = timedelta(minutes=15)


def sweep() -> SweepResult:
    return evaluation_sweep(pending_older_than=PENDING_AFTER, stuck_after=STUCK_AFTER)


def db_task(session_pk: int, status: str, *, started_ago: timedelta | None = None, task_path: str = TASK_PATH):
    return DBTaskResult.objects.create(
        args_kwargs={"args": [session_pk], "kwargs": {}},
        task_path=task_path,
        backend_name="default",
        queue_name="default",
        run_after=get_date_max(),
        status=status,
        started_at=timezone.now() - started_ago if started_ago else None,
    )


def age(session: DiagnosisSession, **fields) -> None:
    DiagnosisSession.objects.filter(pk=session.pk).update(**fields)


@pytest.fixture
def pending_session(project):
    """Ingested 20 minutes ago; its evaluation never happened (the process died)."""
    session = session_ingest(project, chat_payload())
    age(session, evaluation_requested_at=clock.ago(minutes=20))
    return session


@pytest.fixture
def done_session(project):
    session = session_ingest(project, chat_payload(sessionId="s-done"))
    session_evaluate(session_pk=session.pk)
    return session


# --- stuck tasks ----------------------------------------------------------------------------------


@override_settings(TASKS=DATABASE_TASKS)
def test_task_stuck_running_is_reclaimed_and_its_session_retried(pending_session, django_capture_on_commit_callbacks):
    stuck = db_task(pending_session.pk, "RUNNING", started_ago=timedelta(hours=1))

    with django_capture_on_commit_callbacks(execute=True):
        result = sweep()

    assert result == SweepResult(reclaimed_tasks=1)
    stuck.refresh_from_db()
    assert stuck.status == "FAILED" and stuck.finished_at is not None
    assert stuck.exception_class_path.endswith("WorkerLost")
    pending_session.refresh_from_db()
    assert pending_session.evaluation_attempts == 1
    assert pending_session.evaluation_error.startswith("attempt 1/3: worker lost")
    retry = DBTaskResult.objects.exclude(pk=stuck.pk).get()
    assert (retry.status, retry.args_kwargs["args"]) == ("READY", [pending_session.pk])
    assert retry.run_after > timezone.now()  # after the backoff, like any failed attempt


@override_settings(TASKS=DATABASE_TASKS, SELFEVAL_EVALUATION_MAX_ATTEMPTS=3)
def test_stuck_task_of_a_session_out_of_attempts_marks_it_failed(pending_session, django_capture_on_commit_callbacks):
    age(pending_session, evaluation_attempts=2, evaluation_requested_at=timezone.now())
    db_task(pending_session.pk, "RUNNING", started_ago=timedelta(hours=1))

    with django_capture_on_commit_callbacks(execute=True):
        result = sweep()

    assert result == SweepResult(reclaimed_tasks=1, failed_sessions=1)
    pending_session.refresh_from_db()
    assert pending_session.evaluation_state == "FAILED"
    assert DBTaskResult.objects.filter(status="READY").count() == 0


@override_settings(TASKS=DATABASE_TASKS)
def test_recently_started_task_and_other_tasks_are_left_alone(pending_session):
    age(pending_session, evaluation_requested_at=timezone.now())
    running = db_task(pending_session.pk, "RUNNING", started_ago=timedelta(minutes=2))
    other = db_task(pending_session.pk, "RUNNING", started_ago=timedelta(hours=5), task_path="evolution.tasks.other")

    assert sweep() == SweepResult()

    assert set(DBTaskResult.objects.values_list("pk", "status")) == {(running.pk, "RUNNING"), (other.pk, "RUNNING")}


# --- forgotten pending sessions -----------------------------------------------------------------


def test_old_pending_session_is_evaluated_again(pending_session, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep() == SweepResult(pending_requeued=1)

    pending_session.refresh_from_db()
    assert pending_session.evaluation_state == "DONE"  # the in-process backend ran it at once


@override_settings(TASKS=DATABASE_TASKS)
def test_old_pending_session_is_enqueued_for_the_workers(pending_session, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep().pending_requeued == 1

    task = DBTaskResult.objects.get()
    assert (task.status, task.args_kwargs["args"]) == ("READY", [pending_session.pk])
    pending_session.refresh_from_db()
    assert pending_session.evaluation_requested_at > clock.ago(minutes=1)
    # The next sweep sees its task queued and does not add another.
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep() == SweepResult()
    assert DBTaskResult.objects.count() == 1


@override_settings(TASKS=DATABASE_TASKS)
@pytest.mark.parametrize("status", ["READY", "RUNNING"])
def test_pending_session_with_a_queued_or_running_task_is_not_enqueued_again(pending_session, status):
    db_task(pending_session.pk, status, started_ago=timedelta(minutes=1) if status == "RUNNING" else None)

    assert sweep() == SweepResult()

    assert DBTaskResult.objects.count() == 1


def test_recent_pending_session_is_left_alone(project):
    session_ingest(project, chat_payload())

    assert sweep() == SweepResult()


# --- stale or incomplete layers -----------------------------------------------------------------


def test_session_changed_after_its_evaluation_is_evaluated_again(done_session, django_capture_on_commit_callbacks):
    # evaluated_at < updated_at: the session was saved after its last evaluation.
    age(done_session, evaluated_at=clock.ago(hours=1))

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep() == SweepResult(stale_requeued=1)

    done_session.refresh_from_db()
    assert done_session.evaluation_state == "DONE"
    assert done_session.evaluated_at > done_session.updated_at


def test_done_session_missing_a_layer_is_evaluated_again(project, django_capture_on_commit_callbacks):
    session = session_ingest(project, aiops_payload())
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    layers = dict(session.self_evaluation)
    del layers["aiops_rule_evaluation"]
    age(session, self_evaluation=layers)

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep() == SweepResult(stale_requeued=1)

    session.refresh_from_db()
    assert "aiops_rule_evaluation" in session.self_evaluation


@pytest.mark.parametrize(
    ("payload", "layer"),
    [
        (chat_payload(sessionId="s-chat"), "verifier_evaluation"),
        (chat_payload(sessionId="s-chat"), "rule_evaluation"),
        # An AIOps report with structured claims qualifies for the verifier layer too.
        (aiops_payload(sessionId="s-claims", executorOutput=chat_payload()["executorOutput"]), "verifier_evaluation"),
    ],
)
def test_done_session_missing_any_applicable_layer_is_evaluated_again(
    project, django_capture_on_commit_callbacks, payload, layer
):
    session = session_ingest(project, payload)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    layers = dict(session.self_evaluation)
    del layers[layer]
    age(session, self_evaluation=layers)

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep() == SweepResult(stale_requeued=1)

    session.refresh_from_db()
    assert layer in session.self_evaluation


@pytest.mark.parametrize(
    ("payload", "leftover"),
    [
        (chat_payload(sessionId="s-chat"), "aiops_rule_evaluation"),
        (aiops_payload(sessionId="s-plain"), "verifier_evaluation"),  # no executor output
    ],
)
def test_done_session_with_a_layer_that_no_longer_applies_is_evaluated_again(
    project, django_capture_on_commit_callbacks, payload, leftover
):
    session = session_ingest(project, payload)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    age(session, self_evaluation={**session.self_evaluation, leftover: {"verdict": "FAIL"}})

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep() == SweepResult(stale_requeued=1)

    session.refresh_from_db()
    assert leftover not in session.self_evaluation
    assert sweep() == SweepResult()


def test_evaluated_and_failed_sessions_are_left_alone(done_session, project):
    failed = session_ingest(project, chat_payload(sessionId="s-failed"))
    age(failed, evaluation_state="FAILED", evaluation_requested_at=clock.ago(days=1))

    assert sweep() == SweepResult()


# --- command ------------------------------------------------------------------------------------


def test_sweep_command_reports_what_it_did(pending_session, django_capture_on_commit_callbacks):
    out = StringIO()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("evaluation_sweep", "--pending-minutes", "5", stdout=out)

    assert out.getvalue().strip() == (
        "reclaimed 0 stuck task(s) (0 session(s) now FAILED), re-enqueued 1 pending and 0 stale session(s)"
    )


def test_sweep_command_refuses_a_zero_threshold():
    with pytest.raises(CommandError, match="--stuck-minutes must be at least 1"):
        call_command("evaluation_sweep", "--stuck-minutes", "0")


def test_done_session_keeping_a_legacy_layer_is_left_alone(project):
    # The legacy verifier layer of an AIOps report without executor output is kept on purpose.
    legacy = {"verdict": "PASS", "groundedness_score": 0.9}
    session = session_ingest_evaluated(project, aiops_payload(sessionId="s-legacy", selfEvaluation=legacy))
    assert session.self_evaluation["verifier_evaluation"]["source"] == "legacy"

    assert sweep() == SweepResult()
