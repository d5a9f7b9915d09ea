"""A session re-ingested while its evaluation runs ends evaluated on its new content, never the old
(PostgreSQL, real threads and row locks).

Two moments of the running evaluation: while it judges (it has read the old content, holds no
lock), and while it writes (it holds the session's row lock). In both, the old evaluation must not
be the last word: judging, it finds the session changed and writes nothing (STALE); writing, the
re-ingestion waits for its lock, and the evaluation the re-ingestion enqueues comes after it.
"""

import threading
import time

import pytest
from django.db import connection

from diagnosis.constants import Layer
from diagnosis.models import ClaimCheck, DiagnosisSession, EvaluationState, VerifierVerdict
from diagnosis.services import evaluation
from diagnosis.services.evaluation import STALE, session_evaluate
from tests.factories import diagnosis_payload, session_ingest

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SESSION_ID = "s-reingest-0001"
OLD_CLAIM = "order-service 的数据库连接池耗尽"  # supported by its evidence: PASS
NEW_CLAIM = "order-service 的 5xx 错误率升至 25%"  # the evidence says 12.5%: REJECT


class Paused:
    """Stops the evaluation running in `thread_name` when it reaches a step, until released."""

    def __init__(self, monkeypatch, step: str, thread_name: str) -> None:
        self.reached, self.release = threading.Event(), threading.Event()
        original = getattr(evaluation, step)

        def paused(*args, **kwargs):
            if threading.current_thread().name == thread_name:
                self.reached.set()
                assert self.release.wait(timeout=30), "never released"
            return original(*args, **kwargs)

        monkeypatch.setattr(evaluation, step, paused)


def _in_thread(name: str, work) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # surfaced by the test
            outcome.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread, outcome


def _reingest(project) -> DiagnosisSession:
    """The agent posts the session again, with another answer: stored, then evaluated at commit."""
    return session_ingest(project, diagnosis_payload(SESSION_ID, verdict="REJECT", claim_text=NEW_CLAIM))


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def _assert_evaluated_on_the_new_content() -> None:
    session = DiagnosisSession.objects.get(session_id=SESSION_ID)
    assert session.verifier_verdict == VerifierVerdict.REJECT
    assert session.evaluation_state == EvaluationState.DONE
    latest = ClaimCheck.objects.filter(session=session).order_by("-round").first()
    assert latest.text == NEW_CLAIM
    claims = session.self_evaluation[Layer.VERIFIER]["claim_checks"]
    assert [claim["text"] for claim in claims] == [NEW_CLAIM]


@pytest.fixture
def evaluated_old(project) -> DiagnosisSession:
    session = session_ingest(project, diagnosis_payload(SESSION_ID, verdict="PASS", claim_text=OLD_CLAIM))
    session.refresh_from_db()
    assert session.verifier_verdict == VerifierVerdict.PASS  # evaluated at commit, on the old content
    return session


def test_a_reingest_while_the_evaluation_judges_leaves_the_new_contents_evaluation(monkeypatch, project, evaluated_old):
    judging = Paused(monkeypatch, "evaluate", thread_name="worker")
    worker, outcome = _in_thread("worker", lambda: session_evaluate(session_pk=evaluated_old.pk))
    assert judging.reached.wait(timeout=30)  # the worker has read the old content

    _reingest(project)  # committed, and evaluated at commit on the new content
    judging.release.set()
    worker.join(timeout=60)

    assert outcome == [STALE]  # the old content's evaluation wrote nothing
    _assert_evaluated_on_the_new_content()


def test_a_reingest_while_the_evaluation_writes_waits_for_it_and_is_evaluated_after(
    monkeypatch, project, evaluated_old
):
    writing = Paused(monkeypatch, "self_evaluation_merge", thread_name="worker")
    worker, outcome = _in_thread("worker", lambda: session_evaluate(session_pk=evaluated_old.pk))
    assert writing.reached.wait(timeout=30)  # the worker holds the session's row lock

    agent, ingested = _in_thread("agent", lambda: _reingest(project))
    deadline = time.monotonic() + 30
    while not _waiting_for_a_lock():
        assert time.monotonic() < deadline, "the re-ingestion never waited for the evaluation's lock"
        time.sleep(0.05)
    writing.release.set()
    worker.join(timeout=60)
    agent.join(timeout=60)

    assert outcome == ["DONE"]  # the old content's evaluation, written before the re-ingestion
    assert isinstance(ingested[0], DiagnosisSession), ingested
    _assert_evaluated_on_the_new_content()
