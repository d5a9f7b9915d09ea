"""The judge benchmark behind `manage.py judge_benchmark`: labelled claim / evidence pairs (no database).

A pair file is JSON Lines, one object a line: `claim`, `evidence` (strings), `label` (SUPPORTED,
UNSUPPORTED or CONTRADICTED), `lang` ("zh" or "en"); `phenomenon` and `domain` are optional
tags for the per-group tables. Blank lines are skipped; anything else that is not such an object
is an error naming the line.

Each pair goes the production way: the evidence is a successful call's ref, the claim cites it
with the whole evidence as its excerpt, the gatekeeper verifies the binding and `claim_verify`
asks the judge. Figures:
- confusion matrix gold x predicted over the three labels;
- balanced accuracy: the mean of the per-label recalls (labels present in gold);
- precision of SUPPORTED; false-support rate: the share of gold non-SUPPORTED called SUPPORTED;
- contradiction recall; recall of true claims (gold SUPPORTED called SUPPORTED);
- pairs/s over the judging alone, and how many claims went to an LLM.
"""

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diagnosis.services.producers.executor_output import Binding, Claim
from diagnosis.services.producers.gatekeeper import binding_check, source_index
from diagnosis.services.producers.judges import CONTRADICTED, JUDGE_VERDICTS, SUPPORTED, UNSUPPORTED, Judge
from diagnosis.services.producers.judges.analysis import warm_up
from diagnosis.services.producers.types import InvocationData, RefData
from diagnosis.services.producers.verifier import ClaimOutcome, claim_verify

LANGUAGES = ("zh", "en")


class PairFileError(ValueError):
    """A pair file the benchmark cannot read; the message names the line."""


@dataclass(frozen=True, slots=True)
class Pair:
    line: int
    claim: str
    evidence: str
    label: str
    lang: str
    phenomenon: str = ""
    domain: str = ""


def judge_pairs_load(*, path: Path) -> list[Pair]:
    """Every pair of a JSONL file, checked; PairFileError names the first bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PairFileError(f"{path}: cannot read: {exc}") from exc
    pairs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PairFileError(f"{path.name} line {number}: not JSON: {exc.msg}") from exc
        if not isinstance(raw, dict):
            raise PairFileError(f"{path.name} line {number}: a pair is a JSON object")
        for key in ("claim", "evidence", "label", "lang"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise PairFileError(f"{path.name} line {number}: {key!r} must be a non-empty string")
        if raw["label"] not in JUDGE_VERDICTS:
            raise PairFileError(f"{path.name} line {number}: label must be one of {', '.join(JUDGE_VERDICTS)}")
        if raw["lang"] not in LANGUAGES:
            raise PairFileError(f"{path.name} line {number}: lang must be zh or en")
        tags = {key: raw.get(key, "") for key in ("phenomenon", "domain")}
        if not all(isinstance(value, str) for value in tags.values()):
            raise PairFileError(f"{path.name} line {number}: phenomenon and domain must be strings")
        pairs.append(Pair(number, raw["claim"], raw["evidence"], raw["label"], raw["lang"], **tags))
    return pairs


def judge_pair_verify(*, claim: str, evidence: str, judge: Judge, language: str, excerpt: str = "") -> ClaimOutcome:
    """One claim citing one ref whose content is `evidence` (the excerpt: all of it unless given),
    through the gatekeeper and the verifier."""
    excerpt = excerpt or evidence
    ref = RefData(ref_id="ref-1", source="benchmark", content=evidence, content_sha256="", invocation_id="inv-1")
    call = InvocationData(
        invocation_id="inv-1", step_index=1, tool_name="benchmark", status="SUCCESS", arguments={}, output="",
        error="", latency_ms=None, match_level="L0", refs=(ref,),
    )  # fmt: skip
    binding = binding_check(claim_id="c1", ref_id="ref-1", excerpt=excerpt, sources=source_index((call,)))
    subject = Claim(claim_id="c1", text=claim, critical=True, evidence=(Binding("ref-1", excerpt),))
    return claim_verify(claim=subject, bindings=[binding], judge=judge, language=language)


def _figures(gold: list[str], predicted: list[str]) -> dict[str, Any]:
    matrix = {g: dict.fromkeys(JUDGE_VERDICTS, 0) for g in JUDGE_VERDICTS}
    for g, p in zip(gold, predicted, strict=True):
        matrix[g][p if p in JUDGE_VERDICTS else UNSUPPORTED] += 1
    recalls = [matrix[g][g] / sum(matrix[g].values()) for g in JUDGE_VERDICTS if sum(matrix[g].values())]
    called_supported = sum(matrix[g][SUPPORTED] for g in JUDGE_VERDICTS)
    not_supported = sum(sum(matrix[g].values()) for g in (UNSUPPORTED, CONTRADICTED))
    false_support = matrix[UNSUPPORTED][SUPPORTED] + matrix[CONTRADICTED][SUPPORTED]
    true_claims = sum(matrix[SUPPORTED].values())
    contradictions = sum(matrix[CONTRADICTED].values())

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "n": len(gold),
        "confusion": matrix,
        "balanced_accuracy": round(sum(recalls) / len(recalls), 4) if recalls else None,
        "supported_precision": ratio(matrix[SUPPORTED][SUPPORTED], called_supported),
        "false_support_rate": ratio(false_support, not_supported),
        "false_supported": false_support,
        "contradiction_recall": ratio(matrix[CONTRADICTED][CONTRADICTED], contradictions),
        "true_claim_recall": ratio(matrix[SUPPORTED][SUPPORTED], true_claims),
    }


def judge_benchmark_run(*, pairs: list[Pair], judge: Judge) -> dict[str, Any]:
    """Judge every pair; the figures overall, per language, per phenomenon and per domain."""
    outcomes = []
    warm_up()  # jieba's dictionary loads once per process, not per pair
    started = time.perf_counter()
    for pair in pairs:
        outcomes.append(judge_pair_verify(claim=pair.claim, evidence=pair.evidence, judge=judge, language=pair.lang))
    elapsed = time.perf_counter() - started
    predicted = [o.verdict for o in outcomes]

    def grouped(key: str) -> dict[str, Any]:
        groups: dict[str, list[int]] = {}
        for n, pair in enumerate(pairs):
            if getattr(pair, key):
                groups.setdefault(getattr(pair, key), []).append(n)
        return {
            name: _figures([pairs[n].label for n in members], [predicted[n] for n in members])
            for name, members in sorted(groups.items())
        }

    mistakes = [
        {"line": p.line, "label": p.label, "verdict": o.verdict, "claim": p.claim, "rationale": o.rationale}
        for p, o in zip(pairs, outcomes, strict=True)
        if o.verdict != p.label
    ]
    return {
        **_figures([p.label for p in pairs], predicted),
        "judge": getattr(judge, "name", type(judge).__name__),
        "pairs_per_second": round(len(pairs) / elapsed, 1) if elapsed > 0 else None,
        "llm_claims": sum(1 for o in outcomes if o.judge.startswith("llm:") or o.fallback_reason),
        "decided_by": dict(Counter(o.judge for o in outcomes)),
        "by_language": grouped("lang"),
        "by_phenomenon": grouped("phenomenon"),
        "by_domain": grouped("domain"),
        "mistakes": mistakes,
    }
