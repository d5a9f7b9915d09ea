"""`make worker` runs the database task worker without the autoreloader, and SIGTERM stops it
cleanly: the evaluation it is running finishes (SUCCESSFUL) before it exits, never left RUNNING.

The worker is the real one, started by `make worker` (so the Makefile's command line is what is
tested) with DEBUG on, the development default that used to turn the autoreloader on, in its own
process against the test database: PostgreSQL's directly, SQLite's copied to a file and back. Its
evaluation asks the LLM judge (the local fake), which holds the answer until the test releases it,
so the signal lands while the task runs.
"""

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection
from django.test import override_settings
from django_tasks_db.models import DBTaskResult

from diagnosis.models import DiagnosisSession, EvaluationState
from tests.factories import chat_payload, session_ingest

ROOT = Path(__file__).resolve().parents[2]
DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make (the worker is started by `make worker`)"),
]


@contextlib.contextmanager
def database_for_another_process() -> Iterator[str]:
    """A DATABASE_URL on which another process sees the test database's rows, and whose writes the
    test sees once the block ends."""
    if connection.vendor == "postgresql":
        db = connection.settings_dict
        credentials = quote(db["USER"]) + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
        yield f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        return
    # SQLite's test database lives in this process's memory: the worker gets a copy in a file.
    connection.ensure_connection()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "worker.sqlite3"
        with contextlib.closing(sqlite3.connect(path)) as copy:
            connection.connection.backup(copy)
        yield f"sqlite:///{path}"
        with contextlib.closing(sqlite3.connect(path)) as copy:
            copy.backup(connection.connection)


class Worker:
    """`make worker` in a process group of its own, its output (stdout and stderr) read as it comes."""

    def __init__(self, *, database_url: str, llm_url: str) -> None:
        ignored = {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "TASKS_BACKEND", "DEBUG"}
        env = {key: value for key, value in os.environ.items() if key not in ignored}
        env |= {
            "DJANGO_SETTINGS_MODULE": "config.settings.base",  # what manage.py picks without one
            "DEBUG": "true",
            "DATABASE_URL": database_url,
            "SELFEVAL_JUDGE": "llm",
            "SELFEVAL_LLM_BASE_URL": llm_url,
            "SELFEVAL_LLM_MODEL": "test-model",
            "SELFEVAL_LLM_API_KEY": "test-key",
        }
        # -o: the virtualenv counts as installed (the test's interpreter is VPY), nothing is pip-installed.
        self.process = subprocess.Popen(  # noqa: S603 (make, our Makefile, fixed arguments)
            ["make", "-s", "-o", ".venv/.installed", "worker", f"VPY={sys.executable}"],  # noqa: S607
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the worker never {what}:\n{self.output}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM to make, as `kill` or a service manager sends it."""
        self.process.send_signal(signal.SIGTERM)

    def ended(self, timeout: float = 60) -> None:
        """Wait for make (which waits for the worker); kill the group if it hangs."""
        try:
            self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)  # our own group: a hung worker must not outlive the test
                self.process.wait()
            self._reader.join(timeout=5)


def test_sigterm_lets_the_running_evaluation_finish(project, fake_openai):
    fake_openai.script = ["held"]
    with override_settings(TASKS=DATABASE_TASKS):
        session = session_ingest(project, chat_payload())  # enqueues its evaluation when it commits
    task = DBTaskResult.objects.get()
    assert task.status == "READY"

    with database_for_another_process() as database_url:
        worker = Worker(database_url=database_url, llm_url=fake_openai.url)
        worker.wait_until(lambda: fake_openai.requests, "started the evaluation")  # it waits on the judge
        worker.stop()
        time.sleep(0.5)  # the signal lands while the task runs
        assert worker.process.poll() is None, f"the worker did not wait for its task:\n{worker.output}"
        fake_openai.release()
        worker.ended()

    task.refresh_from_db()
    session.refresh_from_db()
    assert task.status == "SUCCESSFUL", worker.output
    assert session.evaluation_state == EvaluationState.DONE
    assert "shutting down gracefully" in worker.output
    assert "Watching for file changes" not in worker.output  # no autoreloader, DEBUG on as it is


def test_sigterm_stops_an_idle_worker_at_once(project, fake_openai):
    with database_for_another_process() as database_url:
        worker = Worker(database_url=database_url, llm_url=fake_openai.url)
        worker.wait_until(lambda: "Starting worker" in worker.output, "started")
        stopped_at = time.monotonic()
        worker.stop()
        worker.ended()

    assert time.monotonic() - stopped_at < 10, worker.output
    assert not DBTaskResult.objects.exists()
    assert DiagnosisSession.objects.count() == 0
