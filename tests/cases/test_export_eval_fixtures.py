"""export_eval_fixtures: reviewer decisions become fixtures that the regression harness loads and runs."""

import json
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command

from cases.models import Case
from cases.services import bad_case_open_for_session, bad_case_update, case_approve, case_create_from_session
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services.evaluation_harness import eval_case_run, eval_fixtures_load
from tests import clock
from tests.factories import aiops_payload, chat_payload, review_of, session_ingest_evaluated
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def decisions(project, superuser):
    approved_chat = session_ingest_evaluated(project, chat_payload())
    review_of(approved_chat, superuser, judgement="correct", verifier_was_right=True)
    case_approve(case=case_create_from_session(session=approved_chat), user=superuser)

    approved_aiops = make_session(project, payload=aiops_payload())
    case_approve(case=case_create_from_session(session=approved_aiops), user=superuser)

    pending = make_session(project, payload=chat_payload(sessionId="s-pending"))
    case_create_from_session(session=pending)  # pending: not exported

    hallucinated = make_session(project, payload=chat_payload(sessionId="s-bad-1"))
    bad = bad_case_open_for_session(session=hallucinated, source="feedback", from_feedback=True)
    bad_case_update(bad_case=bad, user=superuser, status="triaged", category="hallucination", notes="invented pool")

    other = make_session(project, payload=chat_payload(sessionId="s-bad-2"))
    bad_case_update(
        bad_case=bad_case_open_for_session(session=other, source="feedback"),
        user=superuser,
        status="triaged",
        category="other",
    )
    untriaged = make_session(project, payload=chat_payload(sessionId="s-bad-3"))
    bad_case_open_for_session(session=untriaged, source="feedback")  # open: not exported


def test_export_writes_one_fixture_per_decision(decisions, tmp_path, capsys):
    call_command("export_eval_fixtures", "--output", str(tmp_path))

    files = sorted(p.name for p in tmp_path.glob("*.json"))
    assert files == [
        "reviewer-badcase-acme-chat-s-bad-1.json",
        "reviewer-case-acme-chat-a-20261129-0001.json",
        "reviewer-case-acme-chat-s-20261129-0001.json",
    ]
    assert "skipped bad case" in capsys.readouterr().out
    chat = json.loads((tmp_path / "reviewer-case-acme-chat-s-20261129-0001.json").read_text())
    assert chat["source"] == "reviewer" and chat["language"] == "zh"
    assert chat["expected"] == {"verdict": "PASS", "claims": {"c1": "SUPPORTED"}, "gatekeeper": {"c1": ["VERIFIED"]}}
    aiops = json.loads((tmp_path / "reviewer-case-acme-chat-a-20261129-0001.json").read_text())
    assert aiops["expected"] == {"aiopsVerdict": "PASS"}
    assert aiops["session"]["alert"]["service"] == "order-service"
    bad = json.loads((tmp_path / "reviewer-badcase-acme-chat-s-bad-1.json").read_text())
    assert bad["expected"] == {"verdict": "REJECT"}
    assert "hallucination" in bad["description"] and "invented pool" in bad["description"]


def test_exported_sessions_round_trip_through_ingestion_and_the_harness(decisions, tmp_path):
    call_command("export_eval_fixtures", "--output", str(tmp_path))

    fixtures = eval_fixtures_load(directory=tmp_path)

    assert len(fixtures) == 3
    original = chat_payload()
    for fixture in fixtures:
        session_ingest_from_body(fixture["session"])  # valid, or ValidationError
        outcome = eval_case_run(fixture=fixture)
        assert not any("invalid" in m or "producers failed" in m for m in outcome.mismatches), outcome.mismatches
    chat = next(f for f in fixtures if f["name"] == "reviewer-case-acme-chat-s-20261129-0001")
    for key in ("query", "answer", "status", "steps", "executorOutput"):
        assert chat["session"][key] == original[key]
    assert (
        chat["session"]["toolInvocations"][0]["retrievalDetails"] == original["toolInvocations"][0]["retrievalDetails"]
    )


def test_export_again_overwrites_instead_of_duplicating(decisions, tmp_path):
    call_command("export_eval_fixtures", "--output", str(tmp_path))
    Case.objects.update(title="renamed")
    call_command("export_eval_fixtures", "--output", str(tmp_path))

    assert len(list(tmp_path.glob("*.json"))) == 3


def test_export_with_nothing_to_export_writes_nothing(db, tmp_path):
    call_command("export_eval_fixtures", "--output", str(tmp_path / "new"))

    assert list((tmp_path / "new").glob("*.json")) == []


@pytest.fixture
def decisions_over_time(project, other_project, superuser):
    """Two approvals in acme-chat (ten days ago and just now), one in acme-aiops, a bad case triaged ten days ago."""

    def approve(target, session_id, *, days_ago: int = 0):
        case = case_create_from_session(session=make_session(target, payload=chat_payload(sessionId=session_id)))
        with time_machine.travel(clock.ago(days=days_ago), tick=False):
            case_approve(case=case, user=superuser)

    approve(project, "s-old", days_ago=10)
    approve(project, "s-new")
    approve(other_project, "s-elsewhere")
    with time_machine.travel(clock.ago(days=10), tick=False):
        bad = bad_case_open_for_session(
            session=make_session(project, payload=chat_payload(sessionId="s-bad")), source="feedback"
        )
        bad_case_update(bad_case=bad, user=superuser, status="triaged", category="hallucination")


def exported(tmp_path, *args: str) -> list[str]:
    call_command("export_eval_fixtures", "--output", str(tmp_path), *args, stdout=StringIO())
    return sorted(p.stem for p in tmp_path.glob("*.json"))


def test_project_keeps_that_projects_decisions(decisions_over_time, tmp_path):
    assert exported(tmp_path / "aiops", "--project", "acme-aiops") == ["reviewer-case-acme-aiops-s-elsewhere"]
    assert exported(tmp_path / "chat", "--project", "acme-chat") == [
        "reviewer-badcase-acme-chat-s-bad",
        "reviewer-case-acme-chat-s-new",
        "reviewer-case-acme-chat-s-old",
    ]


def test_since_keeps_the_decisions_made_since(decisions_over_time, tmp_path):
    since = clock.ago(days=1).date().isoformat()

    assert exported(tmp_path, "--project", "acme-chat", "--since", since) == ["reviewer-case-acme-chat-s-new"]


@pytest.mark.parametrize(
    ("args", "message"), [(("--project", "nope"), "unknown project 'nope'"), (("--since", "soon"), "neither a date")]
)
def test_bad_project_or_since_is_refused(db, tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("export_eval_fixtures", "--output", str(tmp_path), *args)
