"""Deterministic judge throughput: claim/evidence pairs per second, by the size of the cited ref.

Each pair goes the production way (`judge_pair_verify`: gatekeeper, then `claim_verify`): a
claim cites one excerpt of a ref. Refs are built of distinct sentences (numbers and service
names vary per pair, so no per-text cache helps across pairs), in Chinese and English, of about
500 and about 5,000 characters. The judge reads the excerpt's sentence context, never the whole
ref, so the 5,000-character figure should stay within 2x of the 500-character one. Figures:
- cold: every pair has its own ref (each context tokenised once, for that pair);
- session: 8 claims per ref, as in a session whose claims cite the same refs (contexts cached).
jieba's dictionary is loaded before timing, as in a running worker. Targets: >= 1,000 pairs/s on
500-character refs (cold), and 5,000-character refs no more than 2x slower.

Environment: BENCH_PAIRS (default 1500).
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from diagnosis.services.judge_benchmark import judge_pair_verify  # noqa: E402
from diagnosis.services.producers.judges import DeterministicJudge  # noqa: E402
from diagnosis.services.producers.judges.analysis import warm_up  # noqa: E402

PAIRS = int(os.environ.get("BENCH_PAIRS", "1500"))


def sentences(n: int, zh: bool):
    """Endless distinct filler sentences for ref n."""
    k = 0
    while True:
        k += 1
        if zh:
            yield f"节点 node-{n}-{k} 的磁盘使用率为 {(n * 7 + k) % 90}%，内存使用率 {(n + k * 3) % 80}%，未发现异常。"
        else:
            yield f"worker-{n}-{k} processed {n * 13 + k} jobs in {k % 50 + 1} minutes with {k % 7} retries. "


def make_pair(n: int, size: int) -> tuple[str, str, str, str]:
    zh = n % 2 == 0
    service = f"svc{n}-api"
    if zh:
        excerpt = f"{service} 的错误率升至 {n % 60 + 5}%，p99 延迟 {n % 900 + 100} 毫秒。"
        claim = f"{service} 的错误率升至 {n % 60 + 5}%"
    else:
        excerpt = f"{service} error rate rose to {n % 60 + 5}% while p99 latency reached {n % 900 + 100} ms. "
        claim = f"{service} p99 latency reached {n % 900 + 100} ms"
    filler = sentences(n, zh)
    before, after = [], []
    while sum(map(len, before)) + sum(map(len, after)) + len(excerpt) < size:
        (before if len(before) <= len(after) else after).append(next(filler))
    return claim, "".join(before) + excerpt + "".join(after), excerpt.strip(), "zh" if zh else "en"


def run(size: int, per_ref: int) -> float:
    judge = DeterministicJudge()
    refs = [make_pair(n + size * 1000 + per_ref, size) for n in range(PAIRS // per_ref)]
    started = time.perf_counter()
    judged = 0
    for claim, content, excerpt, language in refs:
        for _ in range(per_ref):
            outcome = judge_pair_verify(claim=claim, evidence=content, judge=judge, language=language, excerpt=excerpt)
            assert outcome.verdict == "SUPPORTED", (claim, outcome.rationale)
            judged += 1
    return judged / (time.perf_counter() - started)


def main() -> None:
    warm_up()
    print(f"deterministic judge, {PAIRS} pairs per figure, single thread")
    figures = {}
    for size in (500, 5000):
        for per_ref, label in ((1, "cold"), (8, "session")):
            figures[size, label] = rate = run(size, per_ref)
            print(f"  refs of ~{size:>5} chars, {label:<7}: {rate:8.0f} pairs/s")
    ratio = figures[500, "cold"] / figures[5000, "cold"]
    print(f"  5,000 vs 500 chars (cold): {ratio:.2f}x slower (target <= 2x); 500 chars cold target >= 1,000 pairs/s")


if __name__ == "__main__":
    main()
