"""export_judge_pairs: people's claim verdicts become pairs judge_benchmark measures and judge_train fits on."""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from diagnosis.models import ClaimCheck
from diagnosis.services.reviews import claim_correction_record
from judge.pairs import pairs_load
from judge.split import Split
from judge.train import training_rows
from tests.factories import REF_CONTENT, UserFactory, evaluated_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(db):
    user = UserFactory(username="bob")
    user.groups.add(Group.objects.get(name="Reviewer"))
    return user


def export(*args: str) -> tuple[list[dict], str]:
    out, err = StringIO(), StringIO()
    call_command("export_judge_pairs", *args, stdout=out, stderr=err)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def corrected(project, reviewer, session_id: str, **verdicts: str):
    """A LOW_CONFID session with people's verdicts on its claims: c1 supported by the excerpt it
    cites, c2 unsupported (its excerpt is not in the ref: the judge read nothing for it)."""
    session = evaluated_session(project, session_id, verdict="LOW_CONFID")
    for claim_id, verdict in verdicts.items():
        claim_correction_record(session=session, reviewer=reviewer, claim_id=claim_id, verdict=verdict)
    return session


def test_each_corrected_claim_is_a_pair_with_the_window_the_judge_read_and_the_persons_label(project, reviewer):
    session = corrected(project, reviewer, "s-pairs", c2="SUPPORTED")
    claim_correction_record(session=session, reviewer=reviewer, claim_id="c1", verdict="right")
    claim_correction_record(session=session, reviewer=reviewer, claim_id="c1", verdict="CONTRADICTED")  # newest wins

    pairs, summary = export()

    assert [(p["claimId"], p["label"]) for p in pairs] == [("c1", "CONTRADICTED")]
    checks = {c.claim_id: c for c in ClaimCheck.objects.filter(session=session)}
    for pair in pairs:
        assert pair["claim"] == checks[pair["claimId"]].text
        assert (pair["project"], pair["sessionId"], pair["lang"], pair["domain"]) == (
            "acme-chat",
            "s-pairs",
            "zh",
            "chat",
        )
        excerpt = checks[pair["claimId"]].bindings[0]["excerpt"]
        assert excerpt in pair["evidence"] and len(pair["evidence"]) <= len(REF_CONTENT)
    assert summary.strip() == "1 pair(s) exported to stdout; corrections left out: 1 no verified excerpt"


def test_judge_benchmark_measures_the_file_and_judge_train_reads_it(project, reviewer, tmp_path):
    for n in range(8):
        corrected(project, reviewer, f"s-pairs-{n}", c1="right", c2="SUPPORTED")
    path = tmp_path / "own.jsonl"
    call_command("export_judge_pairs", "--output", str(path), stdout=StringIO(), stderr=StringIO())
    out = StringIO()

    call_command("judge_benchmark", str(path), "--json", stdout=out)

    report = json.loads(out.getvalue())["own.jsonl"]
    assert report["n"] == 8
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([{"group": "own", "kind": "default", "path": str(path), "licence": "ours"}]))
    rows = training_rows(manifest=manifest, cache={})
    assert len(rows) == len(pairs_load(path, split=Split.FIT))
    assert {row.label for row in rows} <= {0, 1, 2}


def test_a_correction_made_on_evidence_since_replaced_is_left_out_and_counted(project, reviewer):
    session = corrected(project, reviewer, "s-pairs", c1="UNSUPPORTED")
    # The agent re-posts the session with other evidence: a new verifier round, another window.
    evaluated_session(project, session.session_id, verdict="LOW_CONFID", ref_content=REF_CONTENT + " 重启后恢复。")

    pairs, summary = export()

    assert pairs == []
    assert "corrections left out: 1 evidence changed since" in summary


def test_one_project_and_an_unknown_one(project, other_project, reviewer):
    corrected(project, reviewer, "s-mine", c1="UNSUPPORTED")
    corrected(other_project, reviewer, "s-theirs", c1="right")

    assert [p["sessionId"] for p in export("--project", other_project.slug)[0]] == ["s-theirs"]
    with pytest.raises(CommandError, match="unknown project 'nope'"):
        export("--project", "nope")


def test_the_export_costs_the_same_queries_for_one_session_or_many(project, reviewer):
    corrected(project, reviewer, "s-0", c1="right", c2="SUPPORTED")
    with CaptureQueriesContext(connection) as one:
        export()
    for n in range(1, 6):
        corrected(project, reviewer, f"s-{n}", c1="right", c2="UNSUPPORTED")
    with CaptureQueriesContext(connection) as six:
        pairs, _ = export()

    assert len(pairs) == 6
    assert len(six) == len(one)
