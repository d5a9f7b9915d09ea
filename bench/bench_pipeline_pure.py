"""Pure evaluation pipeline throughput: `evaluate(SessionData)` in sessions/s, no database.

Each session has 20 tool invocations (12 retrieval calls with two refs each, 5 log/metric calls,
3 failed calls) and 10 claims in Chinese and English that cover every gatekeeper status and every
claim verdict, judged by the default deterministic judge. Two figures:
- distinct sessions: every session has its own numbers, service names and ref texts, so the
  per-text caches (jieba tokens, facts) do not help: the realistic figure;
- the same session again: what re-evaluating unchanged sessions costs (caches warm).
Single process, single thread (the machine has 2 cores shared with everything else).

Environment: BENCH_SESSIONS (default 300).
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from diagnosis.constants import Layer  # noqa: E402
from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge  # noqa: E402
from diagnosis.services.producers import pipeline  # noqa: E402
from diagnosis.services.producers.types import InvocationData, RefData, SessionData  # noqa: E402

SESSIONS = int(os.environ.get("BENCH_SESSIONS", "300"))


def make_session(n: int) -> SessionData:
    service = f"order{n}-service"
    rate, timeout_ms, pool = 20 + n % 60, 1000 * (5 + n % 50), 10 + n % 90
    kb = (
        f"当 {service} 的数据库连接池耗尽时，请求排队超时并返回 5xx。连接池最大连接数为 {pool}。"
        f"Requests to {service} time out after {timeout_ms}ms when the pool is exhausted. 文档编号 {n}。"
    )
    logs = f"HikariPool-1 - Connection is not available, request timed out after {timeout_ms}ms. 错误率升至 {rate}%。"
    invocations = []
    for i in range(12):
        refs = tuple(
            RefData(f"inv-{i}#{j}", f"kb://runbooks/{n}/{i}", kb if j == 1 else f"{logs} 第 {i} 段", "", f"inv-{i}")
            for j in (1, 2)
        )
        invocations.append(
            InvocationData(f"inv-{i}", i, "lookup_knowledge", "SUCCESS", {}, "", "", 100 + i, "L0" if i else "L1", refs)
        )
    for i in range(12, 17):
        tool = "query_logs" if i % 2 else "query_metrics"
        invocations.append(InvocationData(f"inv-{i}", i, tool, "SUCCESS", {}, {"rate": f"{rate}%"}, "", 50, ""))
    for i in range(17, 20):
        invocations.append(InvocationData(f"inv-{i}", i, "query_metrics", "FAILED", {}, None, "timeout", 15000, ""))
    claims = [
        (f"{service} 的数据库连接池耗尽", True, [("inv-1#1", "连接池耗尽")]),
        (
            f"请求超时 {timeout_ms // 1000} 秒后返回 5xx",
            True,
            [("inv-2#1", "请求排队超时并返回 5xx"), ("inv-2#2", "timed out after")],
        ),
        (f"错误率升至 {rate}%", True, [("inv-3#2", f"错误率升至 {rate}%")]),
        (f"错误率升至 {rate + 7}%", False, [("inv-4#2", f"错误率升至 {rate}%")]),
        (f"连接池最大连接数为 {pool}", False, [("inv-5#1", f"连接池最大连接数为 {pool}")]),
        ("已排除网络问题", True, [("$.no_evidence", "")]),
        (f"The {service} pool is exhausted", False, [("inv-6#1", "when the pool is exhausted")]),
        ("JVM 堆内存使用率 97%", False, [("inv-18", "heap")]),
        ("缓存命中率下降", False, [("inv-7#1", "连接池……超时")]),
        (f"{service} 的线程池耗尽", False, [("inv-99#1", "线程池耗尽"), ("inv-8#1", "线程池耗尽")]),
    ]
    executor_output = {
        "version": "executor_evidence_v2",
        "claims": [
            {
                "claimId": f"c{k}",
                "text": text,
                "critical": critical,
                "evidence": [{"refId": ref, "excerpt": excerpt} for ref, excerpt in evidence],
            }
            for k, (text, critical, evidence) in enumerate(claims)
        ],  # fmt: skip
        "finalAnswer": "debug only",
    }
    return SessionData(
        session_id=f"bench-{n}",
        mode="chat",
        language="zh",
        query=f"{service} 5xx 突增，原因是什么？",
        answer="answer",
        status="SUCCEEDED",
        alert=None,
        active_alerts=[],
        executor_output=executor_output,
        invocations=tuple(invocations),
        evidence_fingerprint=f"fp-{n}",
    )


def evaluate(data: SessionData):
    return pipeline.evaluate(data, config=evaluation_config(), judge=evaluation_judge())


def rate(sessions: list[SessionData]) -> float:
    started = time.perf_counter()
    for data in sessions:
        result = evaluate(data)
        assert not result.errors, result.errors
    return len(sessions) / (time.perf_counter() - started)


def main() -> None:
    warm = evaluate(make_session(-1))  # loads jieba's dictionary once, outside the timing
    verdicts = [str(c.verdict) for c in warm.layers[Layer.VERIFIER].claim_checks]
    print(f"pure pipeline: 20 invocations, 10 claims per session; claim verdicts {sorted(set(verdicts))}")
    distinct = [make_session(n) for n in range(SESSIONS)]
    print(f"  distinct sessions : {rate(distinct):8.1f} sessions/s  ({SESSIONS} sessions)")
    same = [distinct[0]] * SESSIONS
    print(f"  same session again: {rate(same):8.1f} sessions/s  ({SESSIONS} evaluations)")


if __name__ == "__main__":
    main()
