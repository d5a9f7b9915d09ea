"""The judge benchmark behind `manage.py judge_benchmark`: labelled pairs through the real verifier (no database).

Pair files are `judge.pairs` JSON Lines. Each pair goes the production way: the evidence is a
successful call's ref, the claim cites its `excerpt` (all of it when the pair has none), the
gatekeeper verifies the binding and cuts the window, and `claim_verify` asks the judge. A file
may be measured on one part of the split (`judge.split`: `heldout`, what was never fitted or
tuned on; `fit`; or all of it). Figures (`judge.metrics`) overall and per language, the
token-overlap baseline (`judge.baseline`, tuned on the same file's fitting part) beside them,
pairs/s over the judging alone, who decided and how many claims went to an LLM.
"""

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diagnosis.services.producers.executor_output import Binding, Claim
from diagnosis.services.producers.gatekeeper import binding_check, source_index
from diagnosis.services.producers.judges import Judge
from diagnosis.services.producers.types import InvocationData, RefData
from diagnosis.services.producers.verifier import ClaimOutcome, claim_verify
from judge.analysis import warm_up
from judge.baseline import baseline_figures
from judge.metrics import figures
from judge.pairs import Pair, pairs_load
from judge.split import Split


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


@dataclass(frozen=True, slots=True)
class PairSet:
    """One pair file as measured: the part judged, and the fitting part the baseline is tuned on."""

    name: str
    pairs: list[Pair]
    fit: list[Pair]


def pair_set_load(*, path: Path, split: Split | None) -> PairSet:
    """The part `split` of a pair file (all of it for None); PairFileError names a bad line."""
    every = pairs_load(path)
    chosen = every if split is None else [p for p in every if p.split == split]
    return PairSet(path.name, chosen, [p for p in every if p.split == Split.FIT])


def judge_benchmark_run(*, pairs: list[Pair], judge: Judge, fit: list[Pair] | None = None) -> dict[str, Any]:
    """Judge every pair; the figures overall and per language (and the baseline when `fit` is given)."""
    warm_up()  # jieba's dictionary loads once per process, not per pair
    started = time.perf_counter()
    outcomes = [
        judge_pair_verify(claim=p.claim, evidence=p.evidence, judge=judge, language=p.lang, excerpt=p.excerpt)
        for p in pairs
    ]
    elapsed = time.perf_counter() - started

    def measured(members: list[int]) -> dict[str, Any]:
        return figures([pairs[n].label for n in members], [outcomes[n].verdict for n in members])

    languages: dict[str, list[int]] = {}
    for n, pair in enumerate(pairs):
        languages.setdefault(pair.lang, []).append(n)
    report = {
        **measured(list(range(len(pairs)))),
        "judge": getattr(judge, "name", type(judge).__name__),
        "pairs_per_second": round(len(pairs) / elapsed, 1) if elapsed > 0 else None,
        "llm_claims": sum(1 for o in outcomes if o.judge.startswith("llm:") or o.fallback_reason),
        "decided_by": dict(Counter(o.judge for o in outcomes)),
        "bands": dict(Counter(str(o.band) for o in outcomes)),
        "by_language": {lang: measured(members) for lang, members in sorted(languages.items())},
        "mistakes": [
            {"line": p.line, "label": p.label, "verdict": o.verdict, "claim": p.claim, "rationale": o.rationale}
            for p, o in zip(pairs, outcomes, strict=True)
            if o.verdict != p.label
        ],
    }
    if fit:
        report["baseline"] = baseline_figures(
            [(p.claim, p.excerpt or p.evidence, p.label) for p in fit],
            [(p.claim, p.excerpt or p.evidence, p.label) for p in pairs],
        )
    return report
