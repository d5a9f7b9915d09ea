"""export_decisions / import_decisions: people's decisions round-trip byte for byte, stored as they were."""

import json
from io import StringIO
from unittest.mock import ANY

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db.models import F

from cases.models import BadCase, Case, CaseRevision
from cases.services import bad_case_update, case_approve
from core.tenancy.access import Access
from core.tenancy.models import ProjectAPIKey
from diagnosis.models import ClaimCheck, ClaimCorrection, DiagnosisSession, SessionReview
from diagnosis.services.evaluation import session_evaluate
from diagnosis.services.reviews import claim_correction_record
from feedback.models import EndUserVote, FeedbackEvent
from feedback.services import FeedbackSubmitter, feedback_submit
from tests import clock
from tests.factories import UserFactory, evaluated_session, review_of

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
        "claim corrections": ClaimCorrection.objects.count(),
        "claims people corrected": ClaimCorrection.objects.exclude(verdict=F("judge_verdict")).count(),
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
    assert all(before.values()), before  # the demo has some of everything
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
            call_command(
                "import_sessions", "--project", slug, "--input", str(tmp_path / f"{slug}.jsonl"), stdout=StringIO()
            )
    summary = import_decisions(decisions)

    assert human_counts() == before, summary
    assert export_decisions() == decisions.read_text(encoding="utf-8")
    assert {slug: export_sessions(slug) for slug in DEMO_PROJECTS} == sessions

    again = import_decisions(decisions)
    assert again.startswith("0 record(s) stored"), again
    assert export_decisions() == decisions.read_text(encoding="utf-8")


# --- one of each decision, made through the real services ------------------------------------------


@pytest.fixture
def decided(project, api_key, superuser):
    """A useful vote (by the project's key) whose case was edited and approved; a REJECT voted not useful
    twice (once by an end user), its bad case triaged and closed, the session reviewed, then voted useful
    by an admin (a second case, pending)."""
    reviewer = UserFactory(username="bob")
    reviewer.groups.add(Group.objects.get(name="Reviewer"))
    approver = UserFactory(username="dora")
    approver.groups.add(Group.objects.get(name="Case approver"))
    useful = evaluated_session(project, "s-useful")
    key = ProjectAPIKey.objects.get(project=project)
    by_key = FeedbackSubmitter(access=Access.to_project(project.pk), client="api_key", api_key=key)
    feedback_submit(submitter=by_key, session_id="s-useful", value="useful", comment="好用 ✓\u2028", reviewer="ops")
    case = Case.objects.get(session=useful)
    case_approve(case=case, user=approver, note="Checked.", changes={"title": "支付网关超时"})
    rejected = evaluated_session(project, "s-reject", verdict="REJECT", feedback="not_useful")
    end_user = FeedbackSubmitter(
        access=Access.to_project(project.pk),
        client="token",
        end_user_id="eu-7",
        session_pk=rejected.pk,
        session_id="s-reject",
    )
    feedback_submit(submitter=end_user, session_id="s-reject", value="not_useful")
    bad_case = BadCase.objects.get(session=rejected)
    bad_case_update(
        bad_case=bad_case, user=reviewer, status="fixed", category="judge_error", assignee=reviewer, notes="判错了"
    )
    review_of(rejected, reviewer, judgement="correct", verifier_was_right=False, notes="The answer was right.")
    (contradicted,) = ClaimCheck.objects.filter(session=rejected, verdict="CONTRADICTED")
    claim_correction_record(
        session=rejected,
        reviewer=reviewer,
        claim_id=contradicted.claim_id,
        verdict="SUPPORTED",
        note="12.5% → 25% 是两次采样",
    )
    by_admin = FeedbackSubmitter(access=Access.to_everything(), client="admin", user=superuser)
    feedback_submit(submitter=by_admin, session_id="s-reject", value="useful")
    return project


def decisions_by_kind(text: str) -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for line in text.splitlines():
        record = json.loads(line)
        kinds.setdefault(record.pop("kind"), []).append(record)
    return kinds


def sessions_only_again(tmp_path) -> None:
    """An empty database but for the sessions, imported from their export (not evaluated again)."""
    lines = tmp_path / "sessions.jsonl"
    lines.write_text(export_sessions("acme-chat"), encoding="utf-8")
    wipe()
    call_command("import_sessions", "--project", "acme-chat", "--input", str(lines), stdout=StringIO())


def test_each_decision_is_a_record_of_its_kind(decided):
    kinds = decisions_by_kind(export_decisions())

    assert list(kinds) == [
        "session_state",
        "feedback",
        "end_user_vote",
        "case",
        "bad_case",
        "review",
        "claim_correction",
    ]
    case, from_the_admins_vote = kinds["case"]
    assert (from_the_admins_vote["sessionId"], from_the_admins_vote["status"]) == ("s-reject", "pending")
    assert case["status"] == "approved" and case["reviewedBy"] == "dora" and case["title"] == "支付网关超时"
    assert [revision["action"] for revision in case["revisions"]] == ["create", "edit", "approve"]
    assert case["revisions"][1]["editor"] == "dora"
    (bad_case,) = kinds["bad_case"]
    assert bad_case["source"] == "verifier" and bad_case["feedbackCount"] == 2
    assert (bad_case["status"], bad_case["category"], bad_case["assignee"]) == ("fixed", "judge_error", "bob")
    assert bad_case["closedAt"] is not None
    assert [(event["client"], event["apiKey"], event["user"]) for event in kinds["feedback"]] == [
        ("api_key", "agent", None),
        ("api_key", None, None),
        ("token", None, None),
        ("admin", None, "alice"),
    ]
    assert kinds["end_user_vote"] == [
        {"project": "acme-chat", "sessionId": "s-reject", "endUserId": "eu-7", "value": "not_useful", "updatedAt": ANY}
    ]
    (review,) = kinds["review"]
    assert (review["reviewer"], review["judgement"], review["verifierWasRight"]) == ("bob", "correct", False)
    (correction,) = kinds["claim_correction"]
    assert (correction["sessionId"], correction["judgeVerdict"], correction["verdict"]) == (
        "s-reject",
        "CONTRADICTED",
        "SUPPORTED",
    )
    assert (correction["reviewer"], correction["note"], correction["round"]) == ("bob", "12.5% → 25% 是两次采样", 1)
    assert {state["sessionId"]: state["feedback"] for state in kinds["session_state"]} == {
        "s-useful": "useful",
        "s-reject": "useful",
    }


def test_round_trip_into_a_database_without_them_gives_the_same_bytes(decided, tmp_path):
    exported = tmp_path / "decisions.jsonl"
    exported.write_text(export_decisions(), encoding="utf-8")
    before = human_counts()
    sessions_only_again(tmp_path)
    ProjectAPIKey.objects.create_key(name="agent", project=decided)  # a new key of the same name

    summary = import_decisions(exported)

    assert summary.startswith("12 record(s) stored, 0 unchanged"), summary
    assert summary.endswith("users created inactive: alice, bob, dora")
    assert human_counts() == before
    assert export_decisions() == exported.read_text(encoding="utf-8")
    assert FeedbackEvent.objects.filter(api_key__name="agent").count() == 1


def test_reimporting_changes_nothing(decided, tmp_path):
    exported = tmp_path / "decisions.jsonl"
    exported.write_text(export_decisions(), encoding="utf-8")
    case = Case.objects.get(status="approved")
    revisions = list(CaseRevision.objects.values_list("pk", flat=True))

    summary = import_decisions(exported)

    assert summary.startswith("0 record(s) stored, 12 unchanged"), summary
    assert Case.objects.get(status="approved").updated_at == case.updated_at
    assert list(CaseRevision.objects.values_list("pk", flat=True)) == revisions
    assert export_decisions() == exported.read_text(encoding="utf-8")


def test_an_import_moves_each_sessions_trace_version_once(decided, tmp_path):
    """Once per session, however many of its records change it (tests/trace/test_trace_freshness.py
    has each kind's); a re-import changes nothing, the versions included."""
    exported = tmp_path / "decisions.jsonl"
    exported.write_text(export_decisions(), encoding="utf-8")
    sessions_only_again(tmp_path)
    before = dict(DiagnosisSession.objects.values_list("session_id", "trace_version"))

    import_decisions(exported)

    after = dict(DiagnosisSession.objects.values_list("session_id", "trace_version"))
    assert {session_id: after[session_id] - version for session_id, version in before.items()} == {
        "s-useful": 1,
        "s-reject": 1,
    }
    import_decisions(exported)
    assert dict(DiagnosisSession.objects.values_list("session_id", "trace_version")) == after


def test_people_the_database_does_not_know_are_created_inactive_without_a_password(decided, tmp_path):
    exported = tmp_path / "decisions.jsonl"
    exported.write_text(export_decisions(), encoding="utf-8")
    sessions_only_again(tmp_path)
    UserFactory(username="dora")  # an approver who exists keeps her account as it is

    import_decisions(exported)

    created = get_user_model().objects.filter(username__in=["alice", "bob"])
    assert [(user.is_active, user.is_staff, user.has_usable_password()) for user in created] == [
        (False, False, False)
    ] * 2
    assert not any(user.groups.exists() or user.user_permissions.exists() for user in created)
    assert get_user_model().objects.get(username="dora").is_active
    assert Case.objects.get(status="approved").reviewed_by.username == "dora"


def test_an_imported_vote_opens_no_case_and_no_bad_case(decided, tmp_path):
    """Stored state, not replayed: a `useful` event does not create a case, nor `not_useful` a bad case."""
    votes = [line for line in export_decisions().splitlines() if json.loads(line)["kind"] == "feedback"]
    exported = tmp_path / "votes.jsonl"
    exported.write_text("\n".join(votes) + "\n", encoding="utf-8")
    sessions_only_again(tmp_path)

    import_decisions(exported)

    assert FeedbackEvent.objects.count() == 4
    assert not Case.objects.exists() and not BadCase.objects.exists()
    assert set(DiagnosisSession.objects.values_list("feedback", flat=True)) == {""}  # the session_state record sets it


def test_the_verifiers_bad_case_opened_again_by_the_evaluation_takes_the_exported_triage(decided, tmp_path):
    exported = tmp_path / "decisions.jsonl"
    exported.write_text(export_decisions(), encoding="utf-8")
    sessions_only_again(tmp_path)
    session_evaluate(session_pk=DiagnosisSession.objects.get(session_id="s-reject").pk)
    assert BadCase.objects.get().status == "open"

    import_decisions(exported)

    bad_case = BadCase.objects.get()
    assert (bad_case.status, bad_case.category, bad_case.feedback_count) == ("fixed", "judge_error", 2)


def test_an_open_bad_case_of_the_file_and_another_triaged_one_in_the_database_conflict(decided, tmp_path):
    bad_case = BadCase.objects.get()
    bad_case_update(bad_case=bad_case, user=UserFactory(username="root", is_superuser=True), status="triaged")
    line = next(line for line in export_decisions().splitlines() if json.loads(line)["kind"] == "bad_case")
    record = json.loads(line) | {"source": "feedback", "createdAt": clock.iso(clock.ago(minutes=1))}
    conflicting = tmp_path / "conflict.jsonl"
    conflicting.write_text(json.dumps(record) + "\n", encoding="utf-8")

    err = StringIO()

    with pytest.raises(CommandError, match="1 line"):
        call_command("import_decisions", "--input", str(conflicting), stdout=StringIO(), stderr=err)

    assert err.getvalue().startswith(f"line 1: status: the session already has another open bad case, #{bad_case.pk}")
    assert BadCase.objects.count() == 1


BAD_LINES = [
    ("not json", "line 2: not JSON"),
    ('["a list"]', "line 2: not a JSON object"),
    ('{"kind": "verdict"}', "line 2: kind: unknown kind 'verdict'; one of session_state, feedback"),
    ({"value": "meh"}, "line 2: value: unknown value 'meh'; one of useful, not_useful"),
    ({"createdAt": "yesterday"}, "line 2: createdAt: not an ISO 8601 instant: 'yesterday'"),
    ({"createdAt": "2026-11-29T08:00:00"}, "line 2: createdAt: an instant needs its offset"),
    ({"comment": 3}, "line 2: comment: must be str, not int"),
    ({"sessionId": "s-gone"}, "line 2: sessionId: no session 's-gone' in project 'acme-chat'"),
    ({"project": "nope"}, "line 2: project: unknown project 'nope'"),
    ({"colour": "red"}, "line 2: colour: unknown field"),
]


@pytest.mark.parametrize(("change", "message"), BAD_LINES, ids=[message for _, message in BAD_LINES])
def test_a_refused_line_is_named_with_its_field_and_nothing_is_imported(decided, tmp_path, change, message):
    lines = export_decisions().splitlines()
    review = next(line for line in lines if json.loads(line)["kind"] == "review")
    event = next(line for line in lines if json.loads(line)["kind"] == "feedback")
    bad = json.dumps(json.loads(event) | change) if isinstance(change, dict) else change
    source = tmp_path / "bad.jsonl"
    source.write_text(f"{review}\n{bad}\n", encoding="utf-8")
    sessions_only_again(tmp_path)
    err = StringIO()

    with pytest.raises(CommandError, match=r"^1 line\(s\) refused; nothing was imported$"):
        call_command("import_decisions", "--input", str(source), stdout=StringIO(), stderr=err)

    assert err.getvalue().startswith(message), err.getvalue()
    assert not SessionReview.objects.exists() and not get_user_model().objects.exists()


def test_a_nested_field_is_named_by_its_path(decided, tmp_path):
    line = next(line for line in export_decisions().splitlines() if json.loads(line)["kind"] == "case")
    record = json.loads(line)
    record["revisions"][2]["action"] = "merge"
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    err = StringIO()

    with pytest.raises(CommandError):
        call_command("import_decisions", "--input", str(source), stdout=StringIO(), stderr=err)

    assert err.getvalue().startswith("line 1: revisions[2].action: unknown value 'merge'")


def test_export_keeps_one_project(decided, other_project):
    evaluated_session(other_project, "s-other", feedback="useful")

    ours = decisions_by_kind(export_decisions("--project", "acme-chat"))
    theirs = decisions_by_kind(export_decisions("--project", "acme-aiops"))

    assert {record["project"] for records in ours.values() for record in records} == {"acme-chat"}
    assert [case["sessionId"] for case in theirs["case"]] == ["s-other"]
