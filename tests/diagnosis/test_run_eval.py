import json
import os
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path
from xml.etree import ElementTree

import pytest
from django.core.management import CommandError, call_command

from diagnosis.services.evaluation_harness import (
    BINDING_STATUSES,
    CLAIM_LABELS,
    CaseOutcome,
    FixtureError,
    eval_case_run,
    eval_fixtures_load,
    eval_junit_report,
    eval_regressions,
    eval_summary,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
BASELINE = FIXTURES / "baseline.json"


def run_eval(*args: str) -> str:
    out = StringIO()
    call_command("run_eval", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def fixture_copy(tmp_path) -> Path:
    """A private copy of the fixtures (with the baseline) that a test may tamper with."""
    directory = tmp_path / "eval"
    shutil.copytree(FIXTURES, directory)
    return directory


def test_fixtures_cover_what_the_harness_must_guard():
    fixtures = eval_fixtures_load(directory=FIXTURES)
    expected = [f["expected"] for f in fixtures]

    assert len(fixtures) >= 40
    assert {f["language"] for f in fixtures} == {"zh", "en"}
    assert {e["verdict"] for e in expected} == {"PASS", "LOW_CONFID", "REJECT", None}
    assert {label for e in expected for label in e["claims"].values()} == set(CLAIM_LABELS)
    assert {s for e in expected for statuses in e["gatekeeper"].values() for s in statuses} == set(BINDING_STATUSES)
    assert {e["aiopsVerdict"] for e in expected} == {"PASS", "WARN", "FAIL", None}
    assert sum(f["session"]["mode"] == "aiops" for f in fixtures) >= 5
    # Absence claims bound only to $.no_evidence, in both languages.
    no_evidence_claims = [
        claim
        for f in fixtures
        for claim in (f["session"].get("executorOutput") or {}).get("claims", [])
        if [b["refId"] for b in claim["evidence"]] == ["$.no_evidence"]
    ]
    assert {"已排除网络故障", "A network partition was ruled out"} <= {c["text"] for c in no_evidence_claims}


def test_every_fixture_session_is_a_valid_ingestion_payload():
    for fixture in eval_fixtures_load(directory=FIXTURES):
        outcome = eval_case_run(fixture=fixture)
        assert not any(m.startswith("session payload invalid") for m in outcome.mismatches), fixture["name"]
        assert not any(m.startswith("producers failed") for m in outcome.mismatches), fixture["name"]


def test_harness_passes_against_the_committed_baseline():
    output = run_eval("--baseline", str(BASELINE))

    assert "no regression against the baseline" in output
    assert "accuracy per claim label:" in output and "accuracy per verifier verdict:" in output
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert set(baseline["cases"]) == {f["name"] for f in eval_fixtures_load(directory=FIXTURES)}


def test_a_case_that_regresses_fails_the_run(fixture_copy):
    baseline = json.loads((fixture_copy / "baseline.json").read_text(encoding="utf-8"))
    passing = next(name for name, case in sorted(baseline["cases"].items()) if case["passed"])
    path = next(p for p in fixture_copy.glob("*.json") if p.stem.endswith(passing))
    fixture = json.loads(path.read_text(encoding="utf-8"))
    fixture["expected"]["verdict"] = {"PASS": "REJECT"}.get(fixture["expected"]["verdict"], "PASS")
    path.write_text(json.dumps(fixture, ensure_ascii=False), encoding="utf-8")

    with pytest.raises(CommandError, match=f"1 case\\(s\\) regressed against the baseline: {passing}"):
        run_eval("--fixtures", str(fixture_copy), "--baseline", str(fixture_copy / "baseline.json"))


def test_a_case_removed_from_the_fixtures_counts_as_a_regression(fixture_copy):
    baseline = json.loads((fixture_copy / "baseline.json").read_text(encoding="utf-8"))
    passing = next(name for name, case in sorted(baseline["cases"].items()) if case["passed"])
    next(p for p in fixture_copy.glob("*.json") if p.stem.endswith(passing)).unlink()

    with pytest.raises(CommandError, match=passing):
        run_eval("--fixtures", str(fixture_copy), "--baseline", str(fixture_copy / "baseline.json"))


def test_write_baseline_records_each_case(fixture_copy, tmp_path):
    for path in sorted(fixture_copy.glob("*.json"))[3:]:
        path.unlink()
    target = tmp_path / "new-baseline.json"

    output = run_eval("--fixtures", str(fixture_copy), "--write-baseline", str(target))

    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["version"] == 1
    assert len(written["cases"]) == 3
    assert written["summary"]["cases"]["total"] == 3
    assert f"baseline written to {target}" in output


def test_invalid_session_payload_fails_its_case_only(fixture_copy):
    path = sorted(fixture_copy.glob("*.json"))[0]
    fixture = json.loads(path.read_text(encoding="utf-8"))
    fixture["session"]["mode"] = "voice"

    outcome = eval_case_run(fixture=fixture)

    assert not outcome.passed
    assert outcome.mismatches[0].startswith("session payload invalid:") and "mode" in outcome.mismatches[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"name": "x", "language": "fr", "session": {}, "expected": {}}', "language must be zh or en"),
        ('{"name": "x", "language": "en", "session": {}, "expected": {"verdict": "OK"}}', "expected.verdict"),
        (
            '{"name": "x", "language": "en", "session": {}, "expected": {"claims": {"c1": "TRUE"}}}',
            "expected.claims.c1",
        ),
        (
            '{"name": "x", "language": "en", "session": {}, "expected": {"gatekeeper": {"c1": ["FOUND"]}}}',
            "expected.gatekeeper.c1",
        ),
    ],
)
def test_malformed_fixture_is_refused_with_its_file_name(tmp_path, content, message):
    (tmp_path / "01-bad.json").write_text(content, encoding="utf-8")

    with pytest.raises(CommandError, match=f"01-bad.json: .*{message}"):
        run_eval("--fixtures", str(tmp_path))


def test_missing_fixture_directory_and_unreadable_baseline_are_refused(tmp_path):
    with pytest.raises(CommandError, match="is not a directory"):
        run_eval("--fixtures", str(tmp_path / "nope"))
    with pytest.raises(CommandError, match="cannot read"):
        run_eval("--baseline", str(tmp_path / "nope.json"))
    with pytest.raises(FixtureError, match="not a version 1 baseline"):
        eval_regressions(outcomes=[], baseline={"cases": {}})


def test_summary_counts_accuracy_per_expected_label():
    outcomes = [
        CaseOutcome(
            name="a",
            language="en",
            passed=False,
            verdict=("PASS", "LOW_CONFID"),
            claims={"c1": ("SUPPORTED", "SUPPORTED"), "c2": ("CONTRADICTED", "UNSUPPORTED")},
        ),
        CaseOutcome(
            name="b", language="zh", passed=True, verdict=("PASS", "PASS"), claims={"c1": ("SUPPORTED", "SUPPORTED")}
        ),
    ]

    summary = eval_summary(outcomes=outcomes)

    assert summary["cases"] == {"total": 2, "passed": 1}
    assert summary["claims"]["SUPPORTED"] == {"total": 2, "correct": 2, "accuracy": 1.0}
    assert summary["claims"]["CONTRADICTED"] == {"total": 1, "correct": 0, "accuracy": 0.0}
    assert summary["claims"]["all"]["accuracy"] == round(2 / 3, 4)
    assert summary["verdicts"]["PASS"] == {"total": 2, "correct": 1, "accuracy": 0.5}


def _manage_run_eval(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    root = Path(__file__).resolve().parents[2]
    # The harness judges fixtures without a database, but Django may still connect (checks):
    # a private SQLite file, never the DATABASE_URL the test run was given (not its test database).
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'run_eval.sqlite3'}",
    }
    return subprocess.run(  # noqa: S603 (our own manage.py, fixed arguments)
        [sys.executable, str(root / "manage.py"), "run_eval", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_manage_py_run_eval_exits_0_against_the_committed_baseline(tmp_path):
    """The exact command CI and the issue name: its exit status, not only call_command's."""
    done = _manage_run_eval("--baseline", str(BASELINE), tmp_path=tmp_path)

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no regression against the baseline" in done.stdout


def test_manage_py_run_eval_exits_non_zero_on_a_regression(fixture_copy, tmp_path):
    baseline = json.loads((fixture_copy / "baseline.json").read_text(encoding="utf-8"))
    passing = next(name for name, case in sorted(baseline["cases"].items()) if case["passed"])
    path = next(p for p in fixture_copy.glob("*.json") if p.stem.endswith(passing))
    fixture = json.loads(path.read_text(encoding="utf-8"))
    fixture["expected"]["verdict"] = {"PASS": "REJECT"}.get(fixture["expected"]["verdict"], "PASS")
    path.write_text(json.dumps(fixture, ensure_ascii=False), encoding="utf-8")

    done = _manage_run_eval(
        "--fixtures", str(fixture_copy), "--baseline", str(fixture_copy / "baseline.json"), tmp_path=tmp_path
    )

    assert done.returncode != 0
    assert "regressed against the baseline" in done.stderr and passing in done.stderr


@pytest.fixture
def three_fixtures(tmp_path) -> Path:
    """Three committed fixtures in a directory of their own, the second made to fail (its verdict flipped)."""
    directory = tmp_path / "three"
    directory.mkdir()
    for path in sorted(FIXTURES.glob("[0-9]*.json"))[:3]:
        shutil.copy(path, directory / path.name)
    second = sorted(directory.glob("*.json"))[1]
    fixture = json.loads(second.read_text(encoding="utf-8"))
    fixture["expected"]["verdict"] = {"PASS": "REJECT"}.get(fixture["expected"]["verdict"], "PASS")
    second.write_text(json.dumps(fixture, ensure_ascii=False), encoding="utf-8")
    return directory


def test_a_failing_case_fails_the_run_without_a_baseline(three_fixtures):
    failing = json.loads(sorted(three_fixtures.glob("*.json"))[1].read_text(encoding="utf-8"))["name"]

    with pytest.raises(CommandError, match=f"^1 case\\(s\\) failed: {failing}$"):
        run_eval("--fixtures", str(three_fixtures))


def test_every_case_passing_exits_0_without_a_baseline(three_fixtures):
    sorted(three_fixtures.glob("*.json"))[1].unlink()

    assert "cases passed: 2/2" in run_eval("--fixtures", str(three_fixtures))


def test_a_known_failure_in_the_baseline_is_not_a_regression(three_fixtures, tmp_path):
    baseline = tmp_path / "baseline-three.json"
    with pytest.raises(CommandError, match="1 case\\(s\\) failed"):
        run_eval("--fixtures", str(three_fixtures), "--write-baseline", str(baseline))  # written all the same

    assert "no regression against the baseline" in run_eval(
        "--fixtures", str(three_fixtures), "--baseline", str(baseline)
    )


def test_junit_report_has_one_testcase_per_fixture_and_the_mismatch_as_failure(three_fixtures, tmp_path):
    report = tmp_path / "reports" / "run_eval.xml"
    report.parent.mkdir()
    fixtures = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(three_fixtures.glob("*.json"))]

    with pytest.raises(CommandError, match="1 case\\(s\\) failed"):
        run_eval("--fixtures", str(three_fixtures), "--junit", str(report))

    root = ElementTree.fromstring(report.read_bytes())  # noqa: S314 (our own report)
    suite = root.find("testsuite")
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "3", "1")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "0")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == [f["name"] for f in fixtures]
    assert [case.get("classname") for case in cases] == [f"run_eval.{f['language']}" for f in fixtures]
    assert all(float(case.get("time")) >= 0 for case in cases)
    failures = [(case.get("name"), case.find("failure")) for case in cases if case.find("failure") is not None]
    assert [name for name, _ in failures] == [fixtures[1]["name"]]
    failure = failures[0][1]
    expected = fixtures[1]["expected"]["verdict"]
    assert failure.get("type") == "mismatch"
    assert failure.get("message").startswith(f"verdict: expected {expected}, got ")
    assert failure.text.splitlines()[0] == failure.get("message").split("; ")[0]


def test_junit_report_carries_text_that_xml_cannot(tmp_path):
    outcome = CaseOutcome(
        name='zh <案例> & "quotes"',
        language="zh",
        passed=False,
        mismatches=["claim c1: expected SUPPORTED, got \x00\x1b"],
    )

    root = ElementTree.fromstring(eval_junit_report(outcomes=[outcome]))  # noqa: S314 (our own report)

    case = root.find("testsuite/testcase")
    assert case.get("name") == 'zh <案例> & "quotes"'
    assert case.find("failure").get("message") == "claim c1: expected SUPPORTED, got ??"


def test_unwritable_junit_path_is_refused(three_fixtures, tmp_path):
    with pytest.raises(CommandError, match="--junit: cannot write"):
        run_eval("--fixtures", str(three_fixtures), "--junit", str(tmp_path / "missing-dir" / "r.xml"))
