"""export_decisions / import_decisions: people's decisions round-trip byte for byte, stored as they were."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from cases.models import BadCase, Case, CaseRevision
from diagnosis.models import DiagnosisSession, SessionReview
from feedback.models import EndUserVote, FeedbackEvent

pytestmark = pytest.mark.django_db

DEMO_PROJECTS = ("acme-chat", "acme-aiops")


def export_decisions(*args: str) -> str:
    out = StringIO()
    call_command("export_decisions", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def import_decisions(path) -> str:
    out = StringIO()
    call_command("import_decisions", "--input", str(path), stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def export_sessions(slug: str) -> str:
    out = StringIO()
    call_command("export_sessions", "--project", slug, stdout=out, stderr=StringIO())
    return out.getvalue()


def human_counts() -> dict[str, int]:
    return {
        "feedback events": FeedbackEvent.objects.count(),
        "end-user votes": EndUserVote.objects.count(),
        "cases": Case.objects.count(),
        "approved cases": Case.objects.filter(status="approved").count(),
        "case revisions": CaseRevision.objects.count(),
        "bad cases": BadCase.objects.count(),
        "triaged bad cases": BadCase.objects.exclude(status="open").count(),
        "reviews": SessionReview.objects.count(),
        "sessions with feedback": DiagnosisSession.objects.exclude(feedback="").count(),
        "reviewed sessions": DiagnosisSession.objects.filter(reviewed_at__isnull=False).count(),
    }


def wipe() -> None:
    """What a fresh database lacks: every session (and what goes with it), case and user; projects stay."""
    Case.objects.all().delete()
    DiagnosisSession.objects.all().delete()
    get_user_model().objects.all().delete()


def test_demo_data_survives_export_import_export_byte_for_byte(tmp_path, django_capture_on_commit_callbacks):
    call_command("seed_demo", sessions=120, seed=1, stdout=StringIO(), stderr=StringIO())
    before = human_counts()
    sessions = {slug: export_sessions(slug) for slug in DEMO_PROJECTS}
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text(export_decisions(), encoding="utf-8")

    wipe()
    assert set(human_counts().values()) == {0}
    # The imported sessions are evaluated again, as a server does after import_sessions: the verifier
    # opens bad cases for the REJECTs again, which the decisions then meet.
    with django_capture_on_commit_callbacks(execute=True):
        for slug, lines in sessions.items():
            (tmp_path / f"{slug}.jsonl").write_text(lines, encoding="utf-8")
            call_command("import_sessions", "--project", slug, "--input", str(tmp_path / f"{slug}.jsonl"), stdout=StringIO())
    summary = import_decisions(decisions)

    assert human_counts() == before, summary
    assert export_decisions() == decisions.read_text(encoding="utf-8")
    assert {slug: export_sessions(slug) for slug in DEMO_PROJECTS} == sessions
    print(before, summary)

    again = import_decisions(decisions)
    assert again.startswith("0 record(s) stored"), again
    assert export_decisions() == decisions.read_text(encoding="utf-8")
