"""export_sessions / import_sessions: JSON Lines of ingestion payloads that round-trip byte for byte."""

import copy
import io
import json
import os
import stat
import sys
import threading
from io import StringIO

import msgspec
import pytest
from django.core.management import CommandError, call_command

from diagnosis.models import DiagnosisSession, DiagnosisStep, EvidenceRef, ToolInvocation
from diagnosis.selectors import session_list_for_export
from diagnosis.serializers import SessionIngest, session_ingest_from_body
from diagnosis.services.evaluation import session_evaluate
from diagnosis.services.transfer import session_export_lines
from tests import clock
from tests.factories import (
    aiops_payload,
    chat_payload,
    evaluated_session,
    session_ingest,
    session_ingest_evaluated,
    with_invocations,
)
from tests.terminal import TerminalStringIO

pytestmark = pytest.mark.django_db


def export(*args: str, stderr: StringIO | None = None) -> str:
    out = StringIO()
    call_command("export_sessions", *args, stdout=out, stderr=stderr or StringIO())
    return out.getvalue()


def import_file(path, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_sessions", "--input", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def unicode_payload() -> dict:
    """Text a JSON round trip can get wrong: CJK, emoji, line and paragraph separators, quotes, backslashes."""
    payload = chat_payload(sessionId="s-unicode-1")
    payload["query"] = '支付网关 “超时” 😱\u2028第二行\\n 不是换行 "引号"'
    payload["answer"] = "## 根因\r\n连接池耗尽\u2029\t制表符 — ✓"
    payload["steps"][0]["detail"] = {"zeta": [3, 1, 2], "alpha": {"b": None, "a": "é"}, "中文键": True}
    invocation = payload["toolInvocations"][0]
    invocation["arguments"] = {"q": "连接池", "filters": {"z": 1, "a": 2.5}}
    invocation["output"] = [{"chunk": 1, "score": 0.93}, "raw 文本"]
    invocation["retrievalDetails"]["evidenceRefs"][0]["content"] += "\n第二段 🚀"
    return payload


@pytest.fixture
def varied_sessions(project, superuser):
    """One of each shape the export must carry, stored and (mostly) evaluated by the real services."""
    legacy = chat_payload(
        sessionId="s-legacy-1",
        selfEvaluation={"evidence_score": 40, "verdict": "PASS", "groundedness_score": 0.9, "note": "旧版"},
    )
    failed_without_calls = chat_payload(
        sessionId="s-failed-1", status="FAILED", toolInvocations=[], executorOutput=None, answer=""
    )
    # Not executor_evidence_v2, with two problems: which one the rationale names must not depend on
    # the order of the keys as sent (the export sorts them).
    invalid_output = chat_payload(
        sessionId="s-invalid-output-1", executorOutput={"version": "executor_evidence_v1", "claims": "none"}
    )
    running = aiops_payload(sessionId="a-running-1", status="RUNNING", finishedAt=None)
    running["toolInvocations"][1]["latencyMs"] = None
    running["toolInvocations"][0]["stepIndex"] = None
    return [
        evaluated_session(project, "s-pass-1", feedback="useful"),
        evaluated_session(project, "s-reject-1", verdict="REJECT", feedback="not_useful"),
        session_ingest_evaluated(project, aiops_payload()),  # alert, active alerts, a failed call
        session_ingest_evaluated(project, legacy),
        session_ingest(project, chat_payload(sessionId="s-legacy-pending", selfEvaluation={"evidence_score": 55})),
        session_ingest_evaluated(project, failed_without_calls),
        session_ingest(project, running),
        session_ingest_evaluated(project, unicode_payload()),
        session_ingest_evaluated(project, invalid_output),
    ]


def round_trip(tmp_path, other_project) -> tuple[bytes, bytes, str]:
    """Export acme-chat, import the file into the empty other project, export that: (first, second, summary)."""
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    export("--project", "acme-chat", "--output", str(first))
    out, _ = import_file(first, "--project", other_project.slug)
    export("--project", other_project.slug, "--output", str(second))
    return first.read_bytes(), second.read_bytes(), out.strip()


def test_export_import_export_is_byte_identical(varied_sessions, other_project, tmp_path):
    first, second, summary = round_trip(tmp_path, other_project)

    assert summary == "9 session(s) imported into acme-aiops: 9 created, 0 replaced; 0 line(s) skipped"
    assert second == first
    assert len(first.splitlines()) == 9
    copied = EvidenceRef.objects.filter(session__project=other_project)
    assert copied.count() == EvidenceRef.objects.filter(session__project__slug="acme-chat").count()


def test_round_trip_survives_the_evaluation_of_the_imported_sessions(
    varied_sessions, other_project, tmp_path, django_capture_on_commit_callbacks
):
    """The import enqueues each evaluation, as the API does; it gives back the exported layers and rounds."""
    for session in DiagnosisSession.objects.filter(evaluation_state="PENDING"):
        session_evaluate(session_pk=session.pk)  # the source at rest: everything evaluated

    with django_capture_on_commit_callbacks(execute=True):
        first, second, _ = round_trip(tmp_path, other_project)

    assert second == first
    restored = DiagnosisSession.objects.filter(project=other_project)
    assert set(restored.values_list("evaluation_state", flat=True)) == {"DONE"}
    assert sorted(restored.values_list("verifier_verdict", flat=True)) == sorted(
        DiagnosisSession.objects.filter(project__slug="acme-chat").values_list("verifier_verdict", flat=True)
    )


def test_an_invalid_executor_outputs_rationale_does_not_depend_on_the_order_of_its_keys(project):
    sent = {"version": "executor_evidence_v1", "claims": "none"}
    first = session_ingest_evaluated(project, chat_payload(sessionId="s-a", executorOutput=sent))
    second = session_ingest_evaluated(
        project, chat_payload(sessionId="s-b", executorOutput=dict(reversed(list(sent.items()))))
    )

    layers = [
        DiagnosisSession.objects.get(pk=session.pk).self_evaluation["verifier_evaluation"]
        for session in (first, second)
    ]

    assert layers[0]["executor_output_parse_status"] == layers[1]["executor_output_parse_status"]
    assert layers[0]["rationale"] == layers[1]["rationale"]


def test_each_line_is_the_ingestion_payload(varied_sessions):
    lines = export("--project", "acme-chat").splitlines()

    assert len(lines) == 9
    payloads = [json.loads(line) for line in lines]
    for payload in payloads:
        session_ingest_from_body(payload)  # valid, or ValidationError
        # every key, in the payload Struct's order
        assert list(payload) == [field.encode_name for field in msgspec.structs.fields(SessionIngest)]
    # Oldest first: the order of created_at.
    created = [DiagnosisSession.objects.get(session_id=p["sessionId"]).created_at for p in payloads]
    assert created == sorted(created)
    by_id = {p["sessionId"]: p for p in payloads}
    unicode = by_id["s-unicode-1"]
    original = unicode_payload()
    for key in ("query", "answer"):
        assert unicode[key] == original[key]
    assert "支付网关" in lines[[p["sessionId"] for p in payloads].index("s-unicode-1")]  # UTF-8, not \\u escapes
    assert unicode["toolInvocations"][0]["output"] == original["toolInvocations"][0]["output"]
    assert list(unicode["steps"][0]["detail"]) == sorted(original["steps"][0]["detail"])  # stored JSON: keys sorted
    failed = by_id["a-20261129-0001"]["toolInvocations"][1]
    assert failed["status"] == "FAILED" and failed["error"] == "prometheus timeout"
    assert failed["retrievalDetails"] is None
    assert by_id["a-20261129-0001"]["alert"]["service"] == "order-service"
    assert by_id["s-failed-1"]["toolInvocations"] == [] and by_id["s-failed-1"]["executorOutput"] is None
    assert by_id["a-running-1"]["finishedAt"] is None
    # SelfEval's layered container travels as selfEvaluation, legacy keys already in their layers.
    legacy = by_id["s-legacy-pending"]["selfEvaluation"]
    assert legacy == {"rule_evaluation": {"evidence_score": 55, "source": "legacy"}}
    assert by_id["s-legacy-1"]["selfEvaluation"]["note"] == "旧版"
    assert by_id["s-pass-1"]["selfEvaluation"]["verifier_evaluation"]["verdict"] == "PASS"


def test_reimport_replaces_and_changes_nothing(varied_sessions, tmp_path):
    exported = tmp_path / "sessions.jsonl"
    export("--project", "acme-chat", "--output", str(exported))
    counts = (DiagnosisSession.objects.count(), ToolInvocation.objects.count(), DiagnosisStep.objects.count())

    out, _ = import_file(exported, "--project", "acme-chat")

    assert "0 created, 9 replaced" in out
    assert (DiagnosisSession.objects.count(), ToolInvocation.objects.count(), DiagnosisStep.objects.count()) == counts
    assert export("--project", "acme-chat").encode() == exported.read_bytes()


def test_bad_lines_are_reported_by_number_and_skipped(project, tmp_path):
    good = json.dumps(chat_payload(sessionId="s-good-1"), ensure_ascii=False)
    also_good = json.dumps(chat_payload(sessionId="s-good-2"), ensure_ascii=False)
    invalid = copy.deepcopy(chat_payload(sessionId="s-bad-1"))
    invalid["toolInvocations"][0]["status"] = "MAYBE"
    lines = [
        good.encode(),
        b'{"sessionId": "s-cut-off"',
        b"",
        b"[1, 2]",
        b"\xff\xfe not utf-8",
        json.dumps(invalid).encode(),
        also_good.encode(),
    ]
    source = tmp_path / "mixed.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")

    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="4 line\\(s\\) skipped"):
        call_command("import_sessions", "--project", "acme-chat", "--input", str(source), stdout=out, stderr=err)

    assert out.getvalue().strip() == "2 session(s) imported into acme-chat: 2 created, 0 replaced; 4 line(s) skipped"
    assert err.getvalue().splitlines() == [
        "line 2: not JSON: Expecting ',' delimiter at column 26",
        "line 4: not a JSON object",
        "line 5: not UTF-8 (invalid start byte at byte 0)",
        "line 6: toolInvocations.0.status: 'MAYBE' is not one of: SUCCESS, FAILED.",
    ]
    assert set(DiagnosisSession.objects.values_list("session_id", flat=True)) == {"s-good-1", "s-good-2"}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_line_the_database_refuses_leaves_nothing_of_its_session(project, tmp_path):
    """PostgreSQL's jsonb refuses \\u0000: that session is rolled back to its savepoint, the batch goes on."""
    refused = chat_payload(sessionId="s-nul-1")
    refused["steps"][1]["detail"] = {"note": "NUL \u0000 here"}
    source = tmp_path / "nul.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(p) for p in (chat_payload(sessionId="s-before"), refused, chat_payload(sessionId="s-after"))
        )
        + "\n",
        encoding="utf-8",
    )

    err = StringIO()
    with pytest.raises(CommandError, match="1 line\\(s\\) skipped"):
        call_command("import_sessions", "--project", "acme-chat", "--input", str(source), stdout=StringIO(), stderr=err)

    assert err.getvalue().startswith("line 2 (s-nul-1): ")
    assert set(DiagnosisSession.objects.values_list("session_id", flat=True)) == {"s-before", "s-after"}
    assert not DiagnosisStep.objects.filter(session__session_id="s-nul-1").exists()


def test_import_reads_stdin(project, monkeypatch):
    line = json.dumps(chat_payload(sessionId="s-stdin-1"), ensure_ascii=False).encode() + b"\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(line), encoding="utf-8"))

    out = StringIO()
    call_command("import_sessions", "--project", "acme-chat", stdout=out, stderr=StringIO())

    assert "1 created" in out.getvalue()
    assert DiagnosisSession.objects.filter(project=project, session_id="s-stdin-1").exists()


def test_import_needs_an_existing_project(project, tmp_path):
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(chat_payload()) + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match="unknown project 'nope'"):
        import_file(source, "--project", "nope")
    with pytest.raises(CommandError, match="--project"):
        call_command("import_sessions", "--input", str(source))
    with pytest.raises(CommandError, match="cannot read"):
        import_file(tmp_path / "missing.jsonl", "--project", "acme-chat")
    assert not DiagnosisSession.objects.exists()


@pytest.fixture
def dated_sessions(project, other_project):
    def at(session_id, days_ago, target=project):
        return session_ingest(target, chat_payload(sessionId=session_id, createdAt=clock.iso(clock.ago(days=days_ago))))

    return [at("s-old", 10), at("s-mid", 5), at("s-new", 1), at("s-other", 5, other_project)]


def exported_ids(*args: str) -> list[str]:
    return [json.loads(line)["sessionId"] for line in export(*args).splitlines()]


def test_since_and_until_bound_the_creation_time(dated_sessions):
    since = clock.iso(clock.ago(days=5))
    until = clock.ago(days=1).date().isoformat()  # a date: midnight at the start of that day

    assert exported_ids("--project", "acme-chat", "--since", since) == ["s-mid", "s-new"]  # since is inclusive
    assert exported_ids("--project", "acme-chat", "--until", since) == ["s-old"]  # until is exclusive
    assert exported_ids("--project", "acme-chat", "--since", since, "--until", until) == ["s-mid"]
    assert exported_ids() == ["s-old", "s-mid", "s-other", "s-new"]  # every project without --project


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--since", "last tuesday"), "neither a date"),
        (("--until", "2026-02-30"), "neither a date"),
        (("--since", "2026-11-20", "--until", "2026-11-10"), "must be later than --since"),
        (("--project", "nope"), "unknown project 'nope'"),
        (("--chunk-size", "0"), "at least 1"),
    ],
)
def test_export_refuses_bad_arguments(db, args, message):
    with pytest.raises(CommandError, match=message):
        export(*args)


def test_export_to_a_file_replaces_it_only_when_complete(dated_sessions, tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("previous export\n", encoding="utf-8")
    err = StringIO()

    export("--project", "acme-chat", "--output", str(target), stderr=err)

    assert [json.loads(line)["sessionId"] for line in target.read_text(encoding="utf-8").splitlines()] == [
        "s-old",
        "s-mid",
        "s-new",
    ]
    assert not (tmp_path / "out.jsonl.partial").exists()
    assert err.getvalue().strip() == f"3 session(s) exported to {target}"


def test_export_through_a_symlink_replaces_the_file_it_names(dated_sessions, tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)

    export("--project", "acme-chat", "--output", str(link))

    assert link.is_symlink() and len(real.read_text(encoding="utf-8").splitlines()) == 3


def test_export_into_a_pipe_writes_to_it_without_replacing_it(dated_sessions, tmp_path):
    """What is not a regular file (a FIFO here, /dev/stdout or /dev/null alike) is written to, never renamed over."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()

    export("--project", "acme-chat", "--output", str(fifo))
    reader.join(timeout=30)

    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [json.loads(line)["sessionId"] for line in received[0].splitlines()] == ["s-old", "s-mid", "s-new"]
    assert not (tmp_path / "pipe.partial").exists()


def test_export_into_a_missing_directory_is_refused(dated_sessions, tmp_path):
    with pytest.raises(CommandError, match="--output: cannot write"):
        export("--project", "acme-chat", "--output", str(tmp_path / "missing" / "out.jsonl"))


def test_progress_bar_only_on_a_terminal(dated_sessions, tmp_path):
    terminal = TerminalStringIO()
    export("--project", "acme-chat", "--output", str(tmp_path / "a.jsonl"), stderr=terminal)
    quiet_terminal = TerminalStringIO()
    export("--project", "acme-chat", "--output", str(tmp_path / "b.jsonl"), "--no-progress", stderr=quiet_terminal)
    pipe = StringIO()
    export("--project", "acme-chat", "--output", str(tmp_path / "c.jsonl"), stderr=pipe)

    assert "Exporting" in terminal.getvalue() and "3/3" in terminal.getvalue()
    assert "Exporting" not in quiet_terminal.getvalue()
    assert pipe.getvalue().strip() == f"3 session(s) exported to {tmp_path / 'c.jsonl'}"


def test_import_progress_counts_bytes_on_a_terminal(project, tmp_path):
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(chat_payload()) + "\n", encoding="utf-8")
    terminal = TerminalStringIO()

    call_command(
        "import_sessions", "--project", "acme-chat", "--input", str(source), stdout=StringIO(), stderr=terminal
    )

    assert "Importing" in terminal.getvalue() and "100%" in terminal.getvalue()


def test_export_statements_per_chunk_do_not_grow_with_its_sessions(project, django_assert_num_queries):
    """One cursor for the sessions, then steps, invocations and refs: three queries per chunk."""

    def make(count: int, start: int) -> None:
        for number in range(start, start + count):
            session_ingest(project, with_invocations(chat_payload(sessionId=f"s-bulk-{number}"), 3))

    make(2, 0)
    with django_assert_num_queries(4):
        assert len(list(session_export_lines(sessions=session_list_for_export(project=project), chunk_size=10))) == 2
    make(8, 2)
    with django_assert_num_queries(4):
        assert len(list(session_export_lines(sessions=session_list_for_export(project=project), chunk_size=10))) == 10
    with django_assert_num_queries(1 + 3 * 4):
        assert len(list(session_export_lines(sessions=session_list_for_export(project=project), chunk_size=3))) == 10
