"""Deterministic judge throughput on real pairs: claims per second by the size of the cited ref.

Real claim / evidence pairs (the shared development files `../shared/judge-dev`, or
SELFEVAL_JUDGE_DEV; the committed training copies when absent) are packed into refs of about
500, 5,000 and 50,000 characters: each ref holds the evidence of several pairs, one after the
other, and each pair's claim cites its own evidence as the excerpt. A ref is cited by
CLAIMS_PER_REF claims, as in a session whose claims cite the same refs: the gatekeeper normalises
a ref once per session, the judge reads each excerpt's window only. Everything the verifier does
per claim is timed (gatekeeper check with the window, facts, the judge's analysis and model).
Targets: >= 500 claims/s with 500-character refs; 5,000- and 50,000-character refs no more
than 2x slower. jieba's dictionary is loaded before timing, as in a running worker. With the
optional sentence encoder installed (requirements-encoder.txt) the same runs again with it: the
encoder sets that pace (a forward pass per claim and window), so only the ratios are targets there.

Environment: BENCH_CLAIMS (default 1,200 per size), SELFEVAL_JUDGE_DEV.
"""

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the encoder's numpy: one thread, as the label says

import django  # noqa: E402

django.setup()

from diagnosis.services.producers.executor_output import Binding, Claim  # noqa: E402
from diagnosis.services.producers.gatekeeper import binding_check, source_index  # noqa: E402
from diagnosis.services.producers.judges import DeterministicJudge  # noqa: E402
from diagnosis.services.producers.types import InvocationData, RefData  # noqa: E402
from diagnosis.services.producers.verifier import claim_verify  # noqa: E402
from judge import encoder  # noqa: E402
from judge.analysis import warm_up  # noqa: E402
from judge.pairs import pairs_load  # noqa: E402

CLAIMS = int(os.environ.get("BENCH_CLAIMS", "1200"))
CLAIMS_PER_REF = 8
SIZES = (500, 5_000, 50_000)
DEV = Path(os.environ.get("SELFEVAL_JUDGE_DEV", ROOT.parent / "shared" / "judge-dev"))


def real_pairs() -> list:
    names = ("climate_fever.jsonl", "healthver.jsonl", "ocnli_train10k.jsonl")
    files = [DEV / n for n in names if (DEV / n).exists()] or sorted(
        (ROOT / "judge" / "data" / "train").glob("*.jsonl")
    )
    pairs = [p for f in files for p in pairs_load(f)]
    pairs = [p for p in pairs if len(p.evidence) <= 400]
    step = max(1, len(pairs) // (CLAIMS * 2))
    return pairs[::step]  # every file, spread


def sessions(pairs: list, size: int, claims: int) -> list[tuple[str, list]]:
    """Refs of about `size` characters holding `claims` claims in all, each ref with the pairs whose
    evidence it holds and cites (the pairs taken in turn, from the start again when they run out)."""
    out, at = [], 0
    claimed = 0
    while claimed < claims:
        cited = [pairs[(at + k) % len(pairs)] for k in range(CLAIMS_PER_REF)]
        at += CLAIMS_PER_REF
        body = "\n".join(p.evidence for p in cited)
        filler = []
        k = at
        while len(body) + sum(map(len, filler)) < size:
            filler.append(pairs[k % len(pairs)].evidence)
            k += 7
        half = len(filler) // 2
        out.append(("\n".join([*filler[:half], body, *filler[half:]]), cited))
        claimed += len(cited)
    return out


def run(pairs: list, size: int, judge: DeterministicJudge, claims: int = CLAIMS) -> tuple[float, int]:
    refs = sessions(pairs, size, claims)
    judged = 0
    started = time.perf_counter()
    for n, (content, cited) in enumerate(refs):
        ref = RefData(ref_id=f"r{n}", source="bench", content=content, content_sha256="", invocation_id="inv")
        call = InvocationData(
            invocation_id="inv", step_index=1, tool_name="bench", status="SUCCESS", arguments={}, output="",
            error="", latency_ms=None, match_level="L0", refs=(ref,),
        )  # fmt: skip
        index = source_index((call,))  # one session: the ref is normalised once
        for k, pair in enumerate(cited):
            claim = Claim(claim_id=f"c{k}", text=pair.claim, critical=True, evidence=(Binding(f"r{n}", pair.evidence),))
            binding = binding_check(claim_id=claim.claim_id, ref_id=f"r{n}", excerpt=pair.evidence, sources=index)
            claim_verify(claim=claim, bindings=[binding], judge=judge, language=pair.lang)
            judged += 1
    return judged / (time.perf_counter() - started), judged


def measure(pairs: list, judge: DeterministicJudge, *, rate_target: int | None) -> None:
    run(pairs, 500, judge, claims=48)  # load the model and the word lists
    rates = {}
    for size in SIZES:
        if (loaded := encoder.sentence_encoder()) is not None:
            loaded.embed.cache_clear()  # no size reuses another's sentence vectors
        rates[size], judged = run(pairs, size, judge)
        print(f"  refs of ~{size:>6,} chars: {rates[size]:7.0f} claims/s ({judged} claims)")
    base = rates[SIZES[0]]
    if rate_target is not None:
        print(
            f"{'PASS' if base >= rate_target else 'FAIL'} >= {rate_target} claims/s with 500-character refs: {base:.0f}"
        )
    for size in SIZES[1:]:
        slower = base / rates[size]
        print(f"{'PASS' if slower <= 2 else 'FAIL'} {size:,}-character refs at most 2x slower: {slower:.2f}x")


def main() -> None:
    warm_up()
    pairs = real_pairs()
    judge = DeterministicJudge()
    for switch, title, rate_target in (
        ("off", "deterministic judge", 500),
        ("on", "deterministic judge with the sentence encoder (English pairs)", None),
    ):
        os.environ[encoder.ENV] = switch
        encoder.sentence_encoder.cache_clear()
        try:
            encoder.sentence_encoder()
        except encoder.EncoderUnavailable:
            print(f"{title}: not installed (requirements-encoder.txt), not measured")
            continue
        print(f"{title} on real pairs, {CLAIMS_PER_REF} claims per ref, single thread")
        measure(pairs, judge, rate_target=rate_target)


if __name__ == "__main__":
    main()
