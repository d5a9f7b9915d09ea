"""Structure scoring of one answer (`evolution.services.structure.structure_parse`): seed document
004 promises structure verification under 10 ms (性能指标: 结构验证 < 10ms), here up to 30,000
characters.

Pure code, no database: three shapes of markdown answer (sections of headings, prose, lists and
code as an agent writes them; long prose paragraphs; nested lists) at 2,000 to 30,000 characters,
BENCH_ROUNDS rounds each (default 100). Printed per answer: wall-clock median and p95, and the
median CPU time of the scoring thread (what the wall time is on an idle core: the machine is
shared). PASS when every CPU median is under 10 ms.
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentile, print_header  # noqa: E402
from evolution.services.structure import structure_parse  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "100"))
TARGET_MS = 10.0
SIZES = (2_000, 7_400, 15_000, 30_000)

SECTION = """## {n}. 排查步骤 {n}：连接池与慢查询

order-service 在 10:{n:02d} 出现 **HTTP 503**，HikariPool-1 报 `Connection is not available`。
根据 [监控面板](https://grafana.example/d/{n}) 的数据，活跃连接数达到上限 50，等待线程 120 个。

- 检查 `maximumPoolSize` 与数据库 `max_connections` 的比例；
- 找出执行超过 2 秒的慢查询，补充索引；
- 观察 GC 停顿是否拉长了连接持有时间。

```sql
SELECT pid, state, query_start FROM pg_stat_activity WHERE state <> 'idle';
```
"""
PROSE = (
    "The connection pool of order-service was exhausted because slow queries held connections for "
    "seconds while the request rate doubled; every waiting request timed out after 30 s and the "
    "gateway answered 503. 连接池耗尽的直接原因是慢查询长时间占用连接，请求量翻倍后等待线程堆积。\n\n"
)
LIST_ITEM = "- 步骤 {n}：检查 **{n}** 号实例的连接数\n  - 若超过 80% 则扩容\n  - 否则检查慢查询日志 `slow.log`\n"


def grow(unit: str, size: int, title: str) -> str:
    parts, n = [title], 1
    while sum(len(p) for p in parts) < size:
        parts.append(unit.format(n=n))
        n += 1
    return "\n".join(parts)[:size]


def timed(text: str) -> tuple[float, float, float]:
    wall, cpu = [], []
    for _ in range(ROUNDS):
        started, started_cpu = time.perf_counter(), time.thread_time()
        structure_parse(text=text)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return statistics.median(wall), percentile(wall, 95), statistics.median(cpu)


def main() -> int:
    shapes = {
        "sections": (SECTION, "# 订单服务 5xx 诊断报告\n"),
        "prose": (PROSE, "# Diagnosis\n"),
        "lists": (LIST_ITEM, "# 处理步骤\n"),
    }
    print_header("Structure scoring of one answer", rounds=ROUNDS, target_ms=TARGET_MS)
    print(f"{'answer':<18}{'chars':>8}{'wall median':>14}{'wall p95':>11}{'cpu median':>13}")
    worst = 0.0
    for name, (unit, title) in shapes.items():
        for size in SIZES:
            text = grow(unit, size, title)
            structure_parse(text=text)  # the parser's first call, outside the timing
            median, p95, cpu = timed(text)
            worst = max(worst, cpu)
            print(f"{name:<18}{len(text):>8}{median:>12.2f}ms{p95:>9.2f}ms{cpu:>11.2f}ms")
    verdict = "PASS" if worst < TARGET_MS else "FAIL"
    print(f"{verdict}: slowest CPU median {worst:.2f} ms (target < {TARGET_MS:g} ms up to {SIZES[-1]:,} characters)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
