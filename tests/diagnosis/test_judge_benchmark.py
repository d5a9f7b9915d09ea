"""judge_benchmark: the command, its figures, bad pair files, and the committed baseline as a CI gate."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from diagnosis.services.judge_benchmark import PairFileError, judge_benchmark_run, judge_pairs_load
from diagnosis.services.producers.judges import DeterministicJudge

JUDGE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "judge"
BASELINE = json.loads((JUDGE_FIXTURES / "baseline.json").read_text(encoding="utf-8"))
MIN_TRUE_CLAIM_RECALL = 0.55
PHENOMENA = ("roles", "direction", "quantifier", "modality", "negation", "antonym", "absence", "conflict",
             "number_owner")  # fmt: skip


def pair(claim: str, evidence: str, label: str, lang: str = "en") -> str:
    return json.dumps({"claim": claim, "evidence": evidence, "label": label, "lang": lang}, ensure_ascii=False)


def benchmark(*args: str) -> str:
    out = StringIO()
    call_command("judge_benchmark", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(BASELINE["sets"]))
def test_the_judge_is_no_worse_than_the_committed_baseline(name):
    report = judge_benchmark_run(pairs=judge_pairs_load(path=JUDGE_FIXTURES / name), judge=DeterministicJudge())
    baseline = BASELINE["sets"][name]

    assert report["n"] == baseline["n"]
    assert report["false_support_rate"] <= baseline["false_support_rate"], report["mistakes"]
    assert report["balanced_accuracy"] >= baseline["balanced_accuracy"], report["mistakes"]
    # Precision by abstaining has a floor: most true claims must stay SUPPORTED.
    assert report["true_claim_recall"] >= MIN_TRUE_CLAIM_RECALL, report["mistakes"]


def test_the_development_set_covers_every_phenomenon_in_both_languages():
    pairs = judge_pairs_load(path=JUDGE_FIXTURES / "dev.jsonl")

    assert len(pairs) >= 300
    assert {p.lang for p in pairs} == {"zh", "en"} and {p.domain for p in pairs} == {"aiops", "general"}
    for phenomenon in PHENOMENA:
        assert sum(p.phenomenon == phenomenon for p in pairs) >= 15, phenomenon
    assert sum(p.label == "SUPPORTED" and p.phenomenon == "paraphrase" for p in pairs) >= 40


def test_the_command_prints_the_figures_overall_and_per_language(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "\n".join([
            pair("payment-service had no 5xx errors", "payment-service returned 0 5xx errors.", "SUPPORTED"),
            pair("过去一小时 payment-service 没有 5xx 错误", "过去一小时 payment-service 的 5xx 错误数为 0。", "SUPPORTED", "zh"),
            pair("The job failed with exit code 2", "etl failed with exit code 137.", "CONTRADICTED"),
            "",
            pair("trace 9c1e has no errors", "No matching log lines were found for trace 9c1e.", "UNSUPPORTED"),
        ]),
        encoding="utf-8",
    )  # fmt: skip

    output = benchmark(str(path), "--judge", "deterministic")

    assert "[all] n=4" in output and "[en] n=3" in output and "[zh] n=2" not in output and "[zh] n=1" in output
    assert "balanced accuracy 1.000, precision of SUPPORTED 1.000, false-support rate 0.0%" in output
    assert "pairs/s" in output
    report = json.loads(benchmark(str(path), "--json"))
    assert report["confusion"]["SUPPORTED"] == {"SUPPORTED": 2, "UNSUPPORTED": 0, "CONTRADICTED": 0}
    assert report["contradiction_recall"] == 1.0 and report["llm_claims"] == 0
    assert "mistakes" not in report


def test_figures_count_false_support(tmp_path):
    path = tmp_path / "pairs.jsonl"
    # Gold says UNSUPPORTED, the evidence states it word for word: the judge calls it SUPPORTED.
    path.write_text(pair("db-1 restarted", "db-1 restarted at 10:00.", "UNSUPPORTED") + "\n", encoding="utf-8")

    report = json.loads(benchmark(str(path), "--json", "--mistakes"))

    assert report["false_support_rate"] == 1.0 and report["supported_precision"] == 0.0
    assert report["mistakes"][0]["line"] == 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON"),
        ("[1, 2]", "line 2: a pair is a JSON object"),
        ('{"claim": "x", "evidence": "y", "label": "TRUE", "lang": "en"}', "line 2: label must be one of"),
        ('{"claim": "x", "evidence": "y", "label": "SUPPORTED", "lang": "fr"}', "line 2: lang must be zh or en"),
        ('{"claim": "", "evidence": "y", "label": "SUPPORTED", "lang": "en"}', "line 2: 'claim' must be a non-empty"),
        ('{"claim": "x", "evidence": 3, "label": "SUPPORTED", "lang": "en"}', "line 2: 'evidence' must be a non-empty"),
    ],
)
def test_bad_lines_are_named(tmp_path, line, message):
    path = tmp_path / "pairs.jsonl"
    path.write_text(pair("a", "a", "SUPPORTED") + "\n" + line + "\n", encoding="utf-8")

    with pytest.raises(PairFileError, match=message):
        judge_pairs_load(path=path)
    with pytest.raises(CommandError, match=message):
        benchmark(str(path))


def test_missing_file_and_empty_file_are_errors(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        benchmark(str(tmp_path / "nope.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(CommandError, match="no pairs"):
        benchmark(str(tmp_path / "empty.jsonl"))


def test_an_llm_judge_without_endpoint_is_a_clear_error(tmp_path, settings):
    settings.SELFEVAL_LLM_BASE_URL = ""
    path = tmp_path / "pairs.jsonl"
    path.write_text(pair("a", "a", "SUPPORTED") + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match="needs SELFEVAL_LLM_BASE_URL"):
        benchmark(str(path), "--judge", "cascade")
