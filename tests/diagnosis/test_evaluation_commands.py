from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django_tasks_db.models import DBTaskResult

from diagnosis.models import DiagnosisSession
from tests import clock
from tests.diagnosis.test_evaluation import contradicted_payload
from tests.factories import aiops_payload, chat_payload, session_ingest
from tests.terminal import TerminalStringIO

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def reevaluate(*args: str) -> tuple[str, str]:
    """Run it as a person at a terminal would (stderr a terminal: the progress bar shows)."""
    out, err = StringIO(), TerminalStringIO()
    call_command("reevaluate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def sessions(project, other_project):
    """Three pending sessions of `project` (chat PASS, chat REJECT, aiops) and one of another project."""
    made = {
        "pass": session_ingest(project, chat_payload(sessionId="s-pass")),
        "reject": session_ingest(project, contradicted_payload(session_id="s-reject")),
        "aiops": session_ingest(
            project, aiops_payload(sessionId="a-1", createdAt=clock.iso(clock.ago(days=30)), finishedAt=None)
        ),
        "other": session_ingest(other_project, chat_payload(sessionId="s-pass")),
    }
    return made


def states() -> dict[tuple[str, str], str]:
    return {
        (slug, sid): state
        for slug, sid, state in DiagnosisSession.objects.values_list("project__slug", "session_id", "evaluation_state")
    }


def test_by_ids_evaluates_only_those_sessions_of_the_project(sessions):
    out, err = reevaluate("--project", "acme-chat", "--ids", "s-pass", "s-reject")

    assert out.strip() == "2 session(s): DONE 2"
    assert states() == {
        ("acme-chat", "s-pass"): "DONE",
        ("acme-chat", "s-reject"): "DONE",
        ("acme-chat", "a-1"): "PENDING",
        ("acme-aiops", "s-pass"): "PENDING",
    }
    assert "Evaluating" in err and "2/2" in err  # the progress bar, on stderr


def test_unknown_ids_are_refused_before_anything_runs(sessions):
    with pytest.raises(CommandError, match="unknown sessionIds in acme-chat: s-nope"):
        reevaluate("--project", "acme-chat", "--ids", "s-pass", "s-nope")

    assert set(states().values()) == {"PENDING"}


def test_ids_need_a_project(sessions):
    with pytest.raises(CommandError, match="--ids needs --project"):
        reevaluate("--ids", "s-pass")


def test_by_filters(sessions):
    reevaluate("--mode", "chat", "--project", "acme-chat", "--no-progress")

    assert states()[("acme-chat", "s-pass")] == states()[("acme-chat", "s-reject")] == "DONE"
    assert states()[("acme-chat", "a-1")] == states()[("acme-aiops", "s-pass")] == "PENDING"


def test_by_verdict_after_a_first_evaluation(sessions):
    reevaluate("--all", "--no-progress")
    DiagnosisSession.objects.update(evaluation_state="PENDING")

    out, _ = reevaluate("--verdict", "REJECT", "--no-progress")

    assert out.strip() == "1 session(s): DONE 1"
    assert [sid for (_, sid), state in states().items() if state == "DONE"] == ["s-reject"]


def test_since_keeps_recent_sessions(sessions):
    since = clock.ago(days=1).date().isoformat()

    out, _ = reevaluate("--since", since, "--no-progress")

    assert out.strip() == "3 session(s): DONE 3"
    assert states()[("acme-chat", "a-1")] == "PENDING"


def test_state_filter_gives_failed_sessions_a_fresh_attempt_budget(sessions):
    DiagnosisSession.objects.filter(pk=sessions["pass"].pk).update(evaluation_state="FAILED", evaluation_attempts=3)

    out, _ = reevaluate("--state", "FAILED", "--no-progress")

    assert out.strip() == "1 session(s): DONE 1"
    sessions["pass"].refresh_from_db()
    assert (sessions["pass"].evaluation_state, sessions["pass"].evaluation_attempts) == ("DONE", 0)


def test_all_in_small_batches(sessions):
    out, err = reevaluate("--all", "--batch-size", "1")

    assert out.strip() == "4 session(s): DONE 4"
    assert set(states().values()) == {"DONE"}
    last_frame = err.rstrip("\n").rsplit("\r", 1)[-1]
    assert last_frame.startswith("Evaluating: 100%") and " 4/4 " in last_frame


def test_no_progress_bar_without_a_terminal(sessions):
    err = StringIO()
    call_command("reevaluate", "--all", stdout=StringIO(), stderr=err)

    assert err.getvalue() == ""


@override_settings(TASKS=DATABASE_TASKS)
def test_enqueue_hands_the_sessions_to_the_workers(sessions, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = reevaluate("--all", "--enqueue", "--batch-size", "3", "--no-progress")

    assert out.strip() == "4 session(s): enqueued 4"
    assert sorted(args["args"][0] for args in DBTaskResult.objects.values_list("args_kwargs", flat=True)) == sorted(
        session.pk for session in sessions.values()
    )
    assert set(states().values()) == {"PENDING"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "choose exactly one of"),
        (("--all", "--mode", "chat"), "choose exactly one of"),
        (("--all", "--project", "nope"), "unknown project 'nope'"),
        (("--since", "last tuesday"), "neither a date"),
        (("--all", "--batch-size", "0"), "--batch-size must be at least 1"),
    ],
)
def test_bad_arguments_are_refused(sessions, args, message):
    with pytest.raises(CommandError, match=message):
        reevaluate(*args)

    assert set(states().values()) == {"PENDING"}
