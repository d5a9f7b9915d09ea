from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from diagnosis.constants import Layer
from diagnosis.models import DiagnosisSession
from diagnosis.services import evaluation
from diagnosis.services.evaluation import (
    RETRY_SCHEDULED,
    retry_backoff,
    session_evaluate,
    session_evaluation_request,
    session_evaluation_run,
)
from diagnosis.tasks import evaluate_session
from tests.factories import chat_payload, session_ingest

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


class Flaky:
    """Stands in for the pipeline: raises for the first `failures` calls, then evaluates."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.real = evaluation.evaluate

    def __call__(self, data, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"judge unreachable (call {self.calls})")
        return self.real(data, **kwargs)


@pytest.fixture
def evaluated_session(project):
    session = session_ingest(project, chat_payload())
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    return session


def test_task_runs_the_evaluation(project):
    session = session_ingest(project, chat_payload())

    result = evaluate_session.enqueue(session.pk)

    assert result.return_value == "DONE"
    session.refresh_from_db()
    assert session.evaluation_state == "DONE"


def test_transient_failure_is_retried_inline_on_the_immediate_backend(evaluated_session, monkeypatch):
    flaky = Flaky(failures=1)
    monkeypatch.setattr(evaluation, "evaluate", flaky)

    assert session_evaluation_run(session_pk=evaluated_session.pk) == "DONE"

    evaluated_session.refresh_from_db()
    assert flaky.calls == 2
    assert (evaluated_session.evaluation_state, evaluated_session.evaluation_attempts) == ("DONE", 0)
    assert evaluated_session.evaluation_error == ""


@override_settings(SELFEVAL_EVALUATION_MAX_ATTEMPTS=3)
def test_persistent_failure_ends_failed_and_keeps_the_layers(evaluated_session, monkeypatch):
    layers_before = evaluated_session.self_evaluation
    flaky = Flaky(failures=100)
    monkeypatch.setattr(evaluation, "evaluate", flaky)

    assert session_evaluation_run(session_pk=evaluated_session.pk) == "FAILED"

    evaluated_session.refresh_from_db()
    assert flaky.calls == 3
    assert (evaluated_session.evaluation_state, evaluated_session.evaluation_attempts) == ("FAILED", 3)
    assert evaluated_session.evaluation_error == "attempt 3/3: ConnectionError: judge unreachable (call 3)"
    assert evaluated_session.self_evaluation == layers_before
    assert {Layer.RULE, Layer.VERIFIER} <= set(evaluated_session.self_evaluation)
    assert evaluated_session.needs_review  # visible in the admin's triage queue


@override_settings(TASKS=DATABASE_TASKS, SELFEVAL_EVALUATION_RETRY_BACKOFF_SECONDS=30)
def test_failure_on_the_database_backend_schedules_a_deferred_retry(
    evaluated_session, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(evaluation, "evaluate", Flaky(failures=1))
    before = timezone.now()

    with django_capture_on_commit_callbacks(execute=True):
        outcome = session_evaluation_run(session_pk=evaluated_session.pk)

    assert outcome == RETRY_SCHEDULED
    evaluated_session.refresh_from_db()
    assert (evaluated_session.evaluation_state, evaluated_session.evaluation_attempts) == ("PENDING", 1)
    task = DBTaskResult.objects.get()
    assert task.task_path == "diagnosis.tasks.evaluate_session"
    assert task.args_kwargs == {"args": [evaluated_session.pk], "kwargs": {}}
    assert before + timedelta(seconds=30) <= task.run_after <= timezone.now() + timedelta(seconds=30)
    assert not DBTaskResult.objects.ready().exists()  # not before its backoff

    # The worker picks it up later; this time the evaluation succeeds.
    assert task.task.call(*task.args_kwargs["args"]) == "DONE"
    evaluated_session.refresh_from_db()
    assert (evaluated_session.evaluation_state, evaluated_session.evaluation_attempts) == ("DONE", 0)


@override_settings(TASKS=DATABASE_TASKS, SELFEVAL_EVALUATION_MAX_ATTEMPTS=3)
def test_last_attempt_on_the_database_backend_marks_failed_without_new_task(
    evaluated_session, monkeypatch, django_capture_on_commit_callbacks
):
    DiagnosisSession.objects.filter(pk=evaluated_session.pk).update(evaluation_attempts=2)
    monkeypatch.setattr(evaluation, "evaluate", Flaky(failures=1))

    with django_capture_on_commit_callbacks(execute=True):
        assert session_evaluation_run(session_pk=evaluated_session.pk) == "FAILED"

    assert not DBTaskResult.objects.exists()
    evaluated_session.refresh_from_db()
    assert (evaluated_session.evaluation_state, evaluated_session.evaluation_attempts) == ("FAILED", 3)


@override_settings(SELFEVAL_EVALUATION_RETRY_BACKOFF_SECONDS=30)
def test_backoff_doubles_and_is_capped():
    assert [retry_backoff(n).total_seconds() for n in (1, 2, 3, 4)] == [30, 60, 120, 240]
    assert retry_backoff(20) == timedelta(hours=1)


@override_settings(TASKS=DATABASE_TASKS)
def test_request_marks_pending_and_enqueues_after_commit(evaluated_session, django_capture_on_commit_callbacks):
    DiagnosisSession.objects.filter(pk=evaluated_session.pk).update(evaluation_attempts=3, evaluation_state="FAILED")

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert session_evaluation_request(session_pks=[evaluated_session.pk, 987_654]) == 1
        assert not DBTaskResult.objects.exists()  # nothing is enqueued before the commit

    for callback in callbacks:
        callback()
    evaluated_session.refresh_from_db()
    assert (evaluated_session.evaluation_state, evaluated_session.evaluation_attempts) == ("PENDING", 0)
    assert evaluated_session.evaluation_requested_at is not None
    assert list(DBTaskResult.objects.values_list("args_kwargs", flat=True)) == [
        {"args": [evaluated_session.pk], "kwargs": {}}
    ]


def test_request_runs_in_process_on_the_immediate_backend(evaluated_session, django_capture_on_commit_callbacks):
    DiagnosisSession.objects.filter(pk=evaluated_session.pk).update(evaluation_state="FAILED")

    with django_capture_on_commit_callbacks(execute=True):
        assert session_evaluation_request(session_pks=[evaluated_session.pk]) == 1

    evaluated_session.refresh_from_db()
    assert evaluated_session.evaluation_state == "DONE"


def test_request_with_no_sessions_does_nothing(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert session_evaluation_request(session_pks=[]) == 0
