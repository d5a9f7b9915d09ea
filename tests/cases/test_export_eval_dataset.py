"""export_eval_dataset: sessions, approved cases and people's labels in the shapes Ragas, DeepEval and promptfoo read."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cases.selectors import DatasetSource
from cases.services import case_approve
from cases.services.eval_formats import PROMPTFOO_FAITHFULNESS_THRESHOLD, DatasetFormat, eval_dataset_lines
from diagnosis.services.reviews import claim_correction_record, session_mark_reviewed
from tests import clock
from tests.factories import REF_CONTENT, case_of, chat_payload, evaluated_session, session_ingest

pytestmark = pytest.mark.django_db

ROOT_CAUSE = "order-service 的数据库连接池耗尽。"
SOLUTION = "调大连接池并修复连接泄漏。"
REFERENCE = f"{ROOT_CAUSE}\n\n{SOLUTION}"

# Ragas' SingleTurnSample (https://docs.ragas.io/en/stable/concepts/components/eval_sample/, the
# pydantic model in src/ragas/dataset_schema.py): every field optional; extra keys are ignored on load.
RAGAS_FIELDS = {
    "user_input": str,
    "retrieved_contexts": list,
    "reference_contexts": list,
    "response": str,
    "multi_responses": list,
    "reference": str,
    "rubric": dict,
}
# The keys DeepEval's EvaluationDataset.add_goldens_from_json_file reads by default
# (https://deepeval.com/docs/evaluation-datasets; deepeval/dataset/dataset.py). A `scenario` key
# would make the file a conversational dataset.
# What promptfoo's configuration schema (https://promptfoo.dev/config-schema.json) allows in a test case
# and in an assertion: both objects refuse other keys (additionalProperties false).
PROMPTFOO_TEST_KEYS = {
    "description", "vars", "provider", "providers", "prompts", "providerOutput", "assert", "assertScoringFunction",
    "options", "threshold", "metadata",
}  # fmt: skip
PROMPTFOO_ASSERT_KEYS = {
    "type", "value", "config", "threshold", "weight", "provider", "rubricPrompt", "metric", "transform",
    "contextTransform",
}  # fmt: skip
DEEPEVAL_KEYS = {
    "input",
    "actual_output",
    "expected_output",
    "retrieval_context",
    "context",
    "name",
    "additional_metadata",
}


def export(*args: str) -> str:
    out = StringIO()
    call_command("export_eval_dataset", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def data(project, other_project, superuser):
    """s-1 with an approved, edited case; s-2 reviewed with claim corrections; s-3 with a pending case;
    s-pending not evaluated; o-1 of another project with an approved case."""
    approved = evaluated_session(project, "s-1", created_at=clock.ago(hours=3))
    case_approve(
        case=case_of(approved), user=superuser, note="checked", changes={"root_cause": ROOT_CAUSE, "solution": SOLUTION}
    )
    labelled = evaluated_session(project, "s-2", verdict="LOW_CONFID", created_at=clock.ago(hours=2))
    session_mark_reviewed(
        session=labelled, reviewer=superuser, judgement="correct", verifier_was_right=False, notes="first look"
    )
    session_mark_reviewed(
        session=labelled, reviewer=superuser, judgement="partly_correct", verifier_was_right=True, notes="c2 is wrong"
    )
    claim_correction_record(session=labelled, reviewer=superuser, claim_id="c2", verdict="SUPPORTED")
    claim_correction_record(session=labelled, reviewer=superuser, claim_id="c2", verdict="UNSUPPORTED", note="no")
    claim_correction_record(session=labelled, reviewer=superuser, claim_id="c1", verdict="right")
    case_of(evaluated_session(project, "s-3", created_at=clock.ago(hours=1)))  # pending: no reference
    session_ingest(project, chat_payload(sessionId="s-pending"))  # never evaluated
    case_approve(case=case_of(evaluated_session(other_project, "o-1", created_at=clock.ago(hours=4))), user=superuser)


def by_session(samples: list[dict], metadata_key: str) -> dict[str, dict]:
    return {sample[metadata_key]["sessionId"]: sample for sample in samples}


def test_ragas_lines_are_single_turn_samples_with_the_reviewed_reference(data):
    lines = export("--format", "ragas", "--project", "acme-chat").splitlines()

    samples = [json.loads(line) for line in lines]
    assert [s["selfeval"]["sessionId"] for s in samples] == ["s-1", "s-2", "s-3"]  # oldest first
    for sample in samples:
        assert set(sample) - {"selfeval"} <= set(RAGAS_FIELDS)
        for name, kind in RAGAS_FIELDS.items():
            assert name not in sample or isinstance(sample[name], kind), name
        assert all(isinstance(context, str) for context in sample["retrieved_contexts"])
        assert isinstance(sample["user_input"], str)  # a list would make it a MultiTurnSample
    first = by_session(samples, "selfeval")["s-1"]
    assert first["user_input"] == chat_payload()["query"]
    assert first["response"] == chat_payload()["answer"]
    assert first["retrieved_contexts"] == [REF_CONTENT]
    assert first["reference"] == REFERENCE
    assert first["selfeval"]["case"] | {"id": None, "reviewedAt": None} == {
        "id": None,
        "title": chat_payload()["query"],
        "rootCause": ROOT_CAUSE,
        "solution": SOLUTION,
        "faultCategory": "DATABASE",
        "reviewedAt": None,
    }
    assert first["selfeval"]["verifierVerdict"] == "PASS"
    assert first["selfeval"]["evidenceRefs"] == [{"refId": "inv-1#1", "source": "kb://runbooks/order-5xx.md"}]
    assert "reference" not in by_session(samples, "selfeval")["s-3"]  # a pending case is no reference


def test_ragas_export_loads_with_ragas_when_installed(data, tmp_path):
    ragas = pytest.importorskip("ragas")
    path = tmp_path / "dataset.jsonl"
    export("--format", "ragas", "--output", str(path))
    dataset = ragas.EvaluationDataset.from_jsonl(str(path))
    assert len(dataset) == 4


def test_labels_are_the_latest_review_and_the_newest_correction_of_each_claim(data):
    samples = by_session([json.loads(line) for line in export("--format", "ragas").splitlines()], "selfeval")

    labels = samples["s-2"]["selfeval"]
    assert labels["review"] | {"createdAt": None} == {
        "judgement": "partly_correct",
        "verifierWasRight": True,
        "verifierVerdict": "LOW_CONFID",
        "notes": "c2 is wrong",
        "createdAt": None,
    }
    corrections = {c["claimId"]: c for c in labels["claimCorrections"]}
    assert list(corrections) == ["c1", "c2"]
    assert (corrections["c1"]["judgeVerdict"], corrections["c1"]["verdict"]) == ("SUPPORTED", "SUPPORTED")
    assert corrections["c2"]["verdict"] == "UNSUPPORTED" and corrections["c2"]["round"] == 1
    assert samples["s-3"]["selfeval"]["review"] is None and samples["s-3"]["selfeval"]["claimCorrections"] == []


def test_deepeval_file_is_a_list_of_goldens_under_the_default_key_names(data):
    goldens = json.loads(export("--format", "deepeval", "--project", "acme-chat"))

    assert isinstance(goldens, list) and len(goldens) == 3
    for golden in goldens:
        assert set(golden) == DEEPEVAL_KEYS
        assert isinstance(golden["input"], str) and isinstance(golden["actual_output"], str)
        assert all(isinstance(context, str) for context in golden["retrieval_context"])
        assert golden["context"] is None
    first, _, third = goldens
    assert first["name"] == "acme-chat/s-1"
    assert first["expected_output"] == REFERENCE
    assert first["retrieval_context"] == [REF_CONTENT]
    assert first["additional_metadata"]["sessionId"] == "s-1"
    assert third["expected_output"] is None


def test_deepeval_export_loads_with_deepeval_when_installed(data, tmp_path):
    dataset_module = pytest.importorskip("deepeval.dataset")
    path = tmp_path / "goldens.json"
    export("--format", "deepeval", "--output", str(path))
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(file_path=str(path))
    assert len(dataset.goldens) == 4


def test_promptfoo_tests_carry_query_context_and_assertions_from_the_reference(data):
    tests = json.loads(export("--format", "promptfoo", "--project", "acme-chat"))

    assert [t["description"] for t in tests] == ["acme-chat/s-1", "acme-chat/s-2", "acme-chat/s-3"]
    for test in tests:
        assert set(test) <= PROMPTFOO_TEST_KEYS
        assert all(set(assertion) <= PROMPTFOO_ASSERT_KEYS for assertion in test["assert"])
        assert isinstance(test["metadata"], dict)
    first, _, third = tests
    assert first["vars"] == {
        "query": chat_payload()["query"],
        "context": [REF_CONTENT],
        "answer": chat_payload()["answer"],
    }
    faithfulness = {"type": "context-faithfulness", "threshold": PROMPTFOO_FAITHFULNESS_THRESHOLD}
    assert first["assert"][0] == faithfulness
    assert first["assert"][1]["type"] == "llm-rubric" and first["assert"][1]["value"].endswith(REFERENCE)
    assert third["assert"] == [faithfulness]  # no approved case: nothing to compare the answer with
    assert first["metadata"]["case"]["rootCause"] == ROOT_CAUSE


def test_sources_choose_evaluated_approved_or_labelled_sessions(data):
    def sessions(source: str, *more: str) -> list[str]:
        lines = export("--format", "ragas", "--source", source, *more).splitlines()
        return [json.loads(line)["selfeval"]["sessionId"] for line in lines]

    assert sessions("sessions") == ["o-1", "s-1", "s-2", "s-3"]  # s-pending was never evaluated
    assert sessions("cases") == ["o-1", "s-1"]
    assert sessions("cases", "--project", "acme-chat") == ["s-1"]
    assert sessions("labelled") == ["s-2"]
    assert sessions("sessions", "--project", "acme-aiops") == ["o-1"]
    since, until = clock.iso(clock.ago(hours=2, minutes=30)), clock.iso(clock.ago(hours=1, minutes=30))
    assert sessions("sessions", "--since", since, "--until", until) == ["s-2"]


@pytest.mark.parametrize("dataset_format", [f.value for f in DatasetFormat])
def test_two_exports_are_byte_identical_and_a_file_gets_the_same_bytes(data, tmp_path, dataset_format):
    first = export("--format", dataset_format)
    path = tmp_path / "dataset"
    stderr = StringIO()
    call_command("export_eval_dataset", "--format", dataset_format, "--output", str(path), stderr=stderr)

    assert export("--format", dataset_format) == first == path.read_text(encoding="utf-8")
    assert "4 sample(s) exported" in stderr.getvalue()
    assert not list(tmp_path.glob("*.partial"))


def test_an_empty_dataset_is_still_valid_json(project):
    assert json.loads(export("--format", "deepeval")) == []
    assert json.loads(export("--format", "promptfoo")) == []
    assert export("--format", "ragas") == ""


def test_unknown_project_is_refused_by_name(project):
    with pytest.raises(CommandError, match="unknown project 'nope'"):
        export("--format", "ragas", "--project", "nope")


def test_queries_do_not_grow_with_the_sessions(project, superuser, django_assert_num_queries):
    """One query for the sessions, then refs, approved cases, reviews and claim corrections: five a chunk."""

    def make(start: int, count: int) -> None:
        for number in range(start, start + count):
            session = evaluated_session(project, f"s-bulk-{number}", verdict="LOW_CONFID")
            case_approve(case=case_of(session), user=superuser)
            session_mark_reviewed(session=session, reviewer=superuser, judgement="correct", verifier_was_right=True)
            claim_correction_record(session=session, reviewer=superuser, claim_id="c2", verdict="UNSUPPORTED")

    def lines(chunk_size: int) -> list[str]:
        return list(
            eval_dataset_lines(dataset_format=DatasetFormat.RAGAS, source=DatasetSource.SESSIONS, chunk_size=chunk_size)
        )

    make(0, 2)
    with django_assert_num_queries(5):
        assert len(lines(10)) == 2
    make(2, 4)
    with django_assert_num_queries(5):
        assert len(lines(10)) == 6
    with django_assert_num_queries(1 + 4 * 2):
        assert len(lines(3)) == 6
