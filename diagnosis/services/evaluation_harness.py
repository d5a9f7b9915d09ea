"""The evaluation regression harness behind `manage.py run_eval` (no database involved).

A fixture (tests/fixtures/eval/*.json, one case per file) holds a session as the agent posts it
and what a careful human judge expects: the verifier verdict, each claim's label, each claim's
gatekeeper binding statuses and the AIOps verdict. The session is validated by the ingestion
serializer, converted with `session_data_from_payload` and judged by the same pipeline as
production. A case passes when every expectation it states is met; a baseline file records
which cases passed, and a case that passed there and fails now is a regression.
"""

import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from rest_framework.exceptions import ValidationError

from diagnosis.constants import Layer
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge
from diagnosis.services.evaluation_data import session_data_from_payload

BASELINE_VERSION = 1
CLAIM_LABELS = ("SUPPORTED", "UNSUPPORTED", "CONTRADICTED", "NO_EVIDENCE")
VERDICTS = ("PASS", "LOW_CONFID", "REJECT", None)
AIOPS_VERDICTS = ("PASS", "WARN", "FAIL", None)
BINDING_STATUSES = ("VERIFIED", "REF_NOT_FOUND", "REF_FROM_FAILED_CALL", "EXCERPT_MISMATCH", "NO_EVIDENCE")


class FixtureError(ValueError):
    """A fixture file that is not a valid case: the harness refuses to guess."""


@dataclass
class CaseOutcome:
    name: str
    language: str
    passed: bool
    mismatches: list[str] = field(default_factory=list)
    # (expected, actual) pairs, for the accuracy tables.
    verdict: tuple[Any, Any] | None = None
    aiops_verdict: tuple[Any, Any] | None = None
    claims: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    bindings: list[tuple[str, str | None]] = field(default_factory=list)
    seconds: float = 0.0  # time spent judging


def eval_fixtures_load(*, directory: Path) -> list[dict[str, Any]]:
    """Every `*.json` case in `directory` (baseline files excluded), sorted by name, shape-checked."""
    fixtures = []
    names: set[str] = set()
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("baseline"):
            continue
        try:
            fixture = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise FixtureError(f"{path.name}: not JSON: {exc}") from exc
        _check_fixture(path.name, fixture)
        if fixture["name"] in names:
            raise FixtureError(f"{path.name}: duplicate case name {fixture['name']!r}")
        names.add(fixture["name"])
        fixtures.append(fixture)
    return fixtures


def _check_fixture(filename: str, fixture: Any) -> None:
    if not isinstance(fixture, dict):
        raise FixtureError(f"{filename}: a case is a JSON object")
    for key, kind in (("name", str), ("language", str), ("session", dict), ("expected", dict)):
        if not isinstance(fixture.get(key), kind):
            raise FixtureError(f"{filename}: {key!r} must be a {kind.__name__}")
    if fixture["language"] not in ("zh", "en"):
        raise FixtureError(f"{filename}: language must be zh or en")
    expected = fixture["expected"]
    if expected.get("verdict", None) not in VERDICTS:
        raise FixtureError(f"{filename}: expected.verdict must be one of {VERDICTS}")
    if expected.get("aiopsVerdict", None) not in AIOPS_VERDICTS:
        raise FixtureError(f"{filename}: expected.aiopsVerdict must be one of {AIOPS_VERDICTS}")
    for claim_id, label in (expected.get("claims") or {}).items():
        if label not in CLAIM_LABELS:
            raise FixtureError(f"{filename}: expected.claims.{claim_id} must be one of {CLAIM_LABELS}")
    for claim_id, statuses in (expected.get("gatekeeper") or {}).items():
        if not isinstance(statuses, list) or any(status not in BINDING_STATUSES for status in statuses):
            raise FixtureError(f"{filename}: expected.gatekeeper.{claim_id} must list statuses of {BINDING_STATUSES}")


def eval_case_run(*, fixture: dict[str, Any], judge: Any = None) -> CaseOutcome:
    """Judge one fixture with the production pipeline and compare with its labels."""
    from diagnosis.services.producers.pipeline import evaluate

    started = time.perf_counter()
    outcome = CaseOutcome(name=fixture["name"], language=fixture["language"], passed=False)
    try:
        payload = session_ingest_from_body(fixture["session"])
    except ValidationError as error:
        outcome.mismatches.append(f"session payload invalid: {json.dumps(error.detail, ensure_ascii=False)}")
        outcome.seconds = time.perf_counter() - started
        return outcome
    result = evaluate(
        session_data_from_payload(data=payload),
        config=evaluation_config(),
        judge=judge or evaluation_judge(),
    )
    if result.errors:
        outcome.mismatches.append(f"producers failed: {result.errors}")

    expected = fixture["expected"]
    verifier, aiops = result.layers.get(Layer.VERIFIER), result.layers.get(Layer.AIOPS)
    if "verdict" in expected:
        outcome.verdict = (expected["verdict"], verifier.verdict if verifier else None)
    if "aiopsVerdict" in expected:
        outcome.aiops_verdict = (expected["aiopsVerdict"], aiops.verdict if aiops else None)
    for label, pair in (("verdict", outcome.verdict), ("aiopsVerdict", outcome.aiops_verdict)):
        if pair and pair[0] != pair[1]:
            outcome.mismatches.append(f"{label}: expected {pair[0]}, got {pair[1]}")

    actual_claims = {claim.claim_id: claim for claim in result.claim_results}
    for claim_id, label in (expected.get("claims") or {}).items():
        claim = actual_claims.get(claim_id)
        got = claim.verdict if claim else None
        outcome.claims[claim_id] = (label, got)
        if got != label:
            why = f" ({claim.rationale})" if claim and claim.rationale else ""
            outcome.mismatches.append(f"claim {claim_id}: expected {label}, got {got}{why}")
    for claim_id, statuses in (expected.get("gatekeeper") or {}).items():
        claim = actual_claims.get(claim_id)
        got_statuses = [binding.status for binding in claim.bindings] if claim else []
        for position, status in enumerate(statuses):
            outcome.bindings.append((status, got_statuses[position] if position < len(got_statuses) else None))
        if got_statuses != statuses:
            outcome.mismatches.append(f"gatekeeper {claim_id}: expected {statuses}, got {got_statuses}")
    outcome.passed = not outcome.mismatches
    outcome.seconds = time.perf_counter() - started
    return outcome


def _accuracy(pairs: list[tuple[Any, Any]], labels: tuple[Any, ...]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    grouped: dict[Any, list[bool]] = defaultdict(list)
    for expected, actual in pairs:
        grouped[expected].append(expected == actual)
    for label in (*labels, "all"):
        hits = [hit for hits in grouped.values() for hit in hits] if label == "all" else grouped.get(label, [])
        if hits:
            table["none" if label is None else label] = {
                "total": len(hits),
                "correct": sum(hits),
                "accuracy": round(sum(hits) / len(hits), 4),
            }
    return table


def eval_summary(*, outcomes: list[CaseOutcome]) -> dict[str, Any]:
    """Cases passed and accuracy per claim label, per verdict, per binding status, per AIOps verdict."""
    return {
        "cases": {"total": len(outcomes), "passed": sum(o.passed for o in outcomes)},
        "claims": _accuracy([pair for o in outcomes for pair in o.claims.values()], CLAIM_LABELS),
        "verdicts": _accuracy([o.verdict for o in outcomes if o.verdict], VERDICTS),
        "gatekeeper": _accuracy([pair for o in outcomes for pair in o.bindings], BINDING_STATUSES),
        "aiops_verdicts": _accuracy([o.aiops_verdict for o in outcomes if o.aiops_verdict], AIOPS_VERDICTS),
    }


def eval_baseline_build(*, outcomes: list[CaseOutcome]) -> dict[str, Any]:
    return {
        "version": BASELINE_VERSION,
        "cases": {o.name: {"passed": o.passed, "mismatches": o.mismatches} for o in sorted(outcomes, key=_name)},
        "summary": eval_summary(outcomes=outcomes),
    }


def _name(outcome: CaseOutcome) -> str:
    return outcome.name


def eval_regressions(*, outcomes: list[CaseOutcome], baseline: dict[str, Any]) -> list[str]:
    """Names of cases that passed in the baseline and fail now (or disappeared)."""
    if not isinstance(baseline, dict) or baseline.get("version") != BASELINE_VERSION:
        raise FixtureError(f"baseline: not a version {BASELINE_VERSION} baseline file")
    now = {o.name: o.passed for o in outcomes}
    return sorted(
        name
        for name, case in (baseline.get("cases") or {}).items()
        if isinstance(case, dict) and case.get("passed") and not now.get(name, False)
    )


# Characters XML 1.0 cannot carry, even escaped (a judge's rationale quotes arbitrary text).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def eval_junit_report(*, outcomes: list[CaseOutcome], suite: str = "run_eval") -> bytes:
    """The outcomes as JUnit XML (the format CI systems read): one testcase per fixture, a
    `failure` per failing case whose message is its mismatches."""
    failures = sum(not o.passed for o in outcomes)
    seconds = f"{sum(o.seconds for o in outcomes):.3f}"
    counts = {"tests": str(len(outcomes)), "failures": str(failures), "errors": "0", "time": seconds}
    root = ElementTree.Element("testsuites", name=suite, **counts)
    testsuite = ElementTree.SubElement(root, "testsuite", name=suite, skipped="0", **counts)
    for outcome in outcomes:
        testcase = ElementTree.SubElement(
            testsuite,
            "testcase",
            classname=f"{suite}.{outcome.language}",
            name=outcome.name,
            time=f"{outcome.seconds:.3f}",
        )
        if not outcome.passed:
            failure = ElementTree.SubElement(
                testcase, "failure", type="mismatch", message=_NOT_XML.sub("?", "; ".join(outcome.mismatches))
            )
            failure.text = _NOT_XML.sub("?", "\n".join(outcome.mismatches))
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
