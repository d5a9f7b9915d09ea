"""Evolution verification speed without competitors: two answers of about 5,000 characters, and
the largest request the API accepts (20,000-character query, two 200,000-character answers).

Pure code, no database and no network: seed document 004 promises basic < 50 ms, structure < 10 ms,
quality < 200 ms per verification. Measured: the whole `evolution_decide` (five dimensions, decision,
reasons in Chinese) and each dimension alone (basic metrics for both answers, markdown
structure of one answer, quality of one answer with a warm jieba), BENCH_ROUNDS rounds each
(default 200); median and p95 in milliseconds.
"""

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentile, print_header  # noqa: E402
from evolution.services.decision import basic_metrics, evolution_decide  # noqa: E402
from evolution.services.quality import quality_score  # noqa: E402
from evolution.services.structure import structure_parse  # noqa: E402
from evolution.services.text import char_length, query_keywords  # noqa: E402
from evolution.services.types import Thresholds  # noqa: E402

QUERY = "如何提高学习注意力？"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "200"))
# The API's bounds (evolution/serializers.py MAX_QUERY_CHARS, MAX_ANSWER_CHARS); this benchmark runs without Django.
MAX_QUERY_CHARS, MAX_ANSWER_CHARS = 20_000, 200_000

SECTION = """## {n}. 第{n}个提高学习注意力的方法

注意力是可以训练的能力。研究表明，大多数人连续专注的时间在 25 到 45 分钟之间，超过之后效率明显下降。
例如可以把手机放到另一个房间，并在开始前写下本次学习要完成的 3 件事。

- 使用番茄工作法：专注 25 分钟，休息 5 分钟；
- 保持书桌整洁，只留下当前要用的教材和笔记；
- 保证每天 7 到 8 小时睡眠，每周运动 3 次；
- 遇到走神时不要自责，温和地把注意力拉回来。

```text
第{n}天：专注 {n}0 分钟，走神 {n} 次
```
"""


def answer(target: int, offset: int) -> str:
    parts, n = [f"# 如何提高学习注意力（版本 {offset}）\n"], offset
    while char_length("\n".join(parts)) < target:
        parts.append(SECTION.format(n=n))
        n += 1
    return "\n".join(parts)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), percentile(samples, 95)


def main() -> None:
    old, new = answer(5000, 1), answer(5000, 3)
    thresholds = Thresholds()
    query_keywords(QUERY)  # loads jieba's dictionary once, as a running server has
    print_header(
        "Evolution verification without competitors",
        old_chars=char_length(old),
        new_chars=char_length(new),
        rounds=ROUNDS,
    )
    figures = {
        "basic (both answers)": timed(lambda: basic_metrics(old_response=old, new_response=new, thresholds=thresholds)),
        "structure (one answer)": timed(lambda: structure_parse(text=new)),
        "quality (one answer)": timed(lambda: quality_score(query=QUERY, response=new)),
        "full verification": timed(
            lambda: evolution_decide(query=QUERY, old_response=old, new_response=new, thresholds=thresholds)
        ),
    }
    promise = {"basic (both answers)": 50, "structure (one answer)": 10, "quality (one answer)": 200}
    for name, (median, p95) in figures.items():
        goal = f"   (seed document 004: < {promise[name]} ms)" if name in promise else ""
        print(f"{name:<24} median {median:8.3f} ms   p95 {p95:8.3f} ms{goal}")
    result = evolution_decide(query=QUERY, old_response=old, new_response=new, thresholds=thresholds)
    print(f"decision: is_valid={result.is_valid} confidence={result.confidence}")
    print(f"maximum size             median {largest_verification(thresholds):8.3f} ms   (one uncached call)")


def largest_verification(thresholds: Thresholds) -> float:
    """The largest request the API accepts: a query of MAX_QUERY_CHARS distinct words (the most
    keywords) and two answers of MAX_ANSWER_CHARS; the keyword cache is cleared each round."""
    words = " ".join(f"w{n:05d}" for n in range(MAX_QUERY_CHARS // 7))[:MAX_QUERY_CHARS]
    old, new = answer(MAX_ANSWER_CHARS, 1)[:MAX_ANSWER_CHARS], answer(MAX_ANSWER_CHARS, 3)[:MAX_ANSWER_CHARS]
    samples = []
    for _ in range(5):
        query_keywords.cache_clear()
        started = time.perf_counter()
        evolution_decide(query=words, old_response=old, new_response=new, thresholds=thresholds)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


if __name__ == "__main__":
    main()
