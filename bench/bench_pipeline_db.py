"""Evaluation speed for a session with 20 tool invocations and 10 claims, on PostgreSQL.

Setup: a throwaway PostgreSQL database (migrated), BENCH_SESSIONS sessions (default 200)
ingested with the dummy task backend so nothing is evaluated at ingestion, the default
(deterministic) judge, jieba's dictionary loaded once as in a running worker. Measured, in one
process, one session after the other:
- pure computation: `producers.pipeline.evaluate` on prepared `SessionData` (no database), once
  per distinct session (texts differ, so text caches are cold) and repeatedly on one session;
- end to end: `session_evaluate` = load the session, its invocations and refs, run the pipeline,
  merge the layers under a row lock, upsert the 10 claim-check rows and their ref links, in one
  transaction; first evaluation of each session, then a re-evaluation (idempotent rewrite);
- SQL statements per evaluated session, for 1 invocation / 1 claim and 20 / 10.
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import django_env, percentile, print_header, throwaway_database  # noqa: E402

SESSIONS = int(os.environ.get("BENCH_SESSIONS", "200"))
PURE_ROUNDS = int(os.environ.get("BENCH_ROUNDS", "300"))
INVOCATIONS, CLAIMS = 20, 10


def session_payload(session_id: str, invocations: int, claims: int, n: int = 0) -> dict:
    """Texts carry `n` in their numbers, so no two sessions share a string (no warm text caches)."""
    calls = [
        {
            "invocationId": f"inv-{i}",
            "stepIndex": None,
            "toolName": ("lookup_knowledge", "query_logs", "query_metrics")[i % 3],
            "status": "SUCCESS" if i % 7 else "FAILED",
            "arguments": {"query": "order-service 5xx", "page": i},
            "output": f"order-service http_5xx_ratio 0.{i:02d}; hikaricp_connections_pending {80 + i + n}",
            "error": None if i % 7 else "timeout",
            "latencyMs": 100 + i,
            "retrievalDetails": {
                "matchLevel": "L0" if i == 1 else "L1",
                "evidenceRefs": [
                    {
                        "refId": f"inv-{i}#1",
                        "source": f"kb://runbooks/order-5xx-{i}.md",
                        "content": f"第 {i} 段：08:0{i % 10} order-service 的数据库连接池耗尽，"
                        f"{50 + i + n} 个请求等待连接超过 {30 + n} 秒并返回 HTTP 503。",
                    }
                ],
            },
        }
        for i in range(1, invocations + 1)
    ]
    successful = [i for i in range(1, invocations + 1) if i % 7]
    claim_rows = []
    for k in range(claims):
        i = successful[k % len(successful)]
        waiting = f"{50 + i + n} 个请求等待连接超过 {30 + n} 秒"
        claim_rows.append(
            {
                "claimId": f"c{k + 1}",
                "text": f"{50 + i + n} 个 order-service 请求等待数据库连接超过 {30 + n} 秒"
                if k % 3
                else "order-service 的数据库连接池耗尽",
                "critical": k < 3,
                "evidence": [{"refId": f"inv-{i}#1", "excerpt": waiting if k % 3 else "数据库连接池耗尽"}],
            }
        )
    return {
        "sessionId": session_id,
        "mode": "chat",
        "query": "订单服务 5xx 突增，原因是什么？",
        "answer": "## 根因\norder-service 的数据库连接池耗尽。",
        "status": "SUCCEEDED",
        "createdAt": "2026-11-29T08:00:00Z",
        "finishedAt": "2026-11-29T08:00:09Z",
        "toolInvocations": calls,
        "executorOutput": {"version": "executor_evidence_v2", "claims": claim_rows, "finalAnswer": "debug only"},
    }


def rate(samples: list[float]) -> str:
    total = sum(samples)
    return (
        f"{len(samples) / total:.1f} sessions/s; per session median {statistics.median(samples) * 1000:.2f} ms, "
        f"p95 {percentile(samples, 95) * 1000:.2f} ms"
    )


def main() -> None:
    with throwaway_database("pipeline") as database:
        os.environ.update(django_env(database, TASKS_BACKEND="dummy"))
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        from diagnosis.models import ClaimCheck, DiagnosisSession, EvidenceRef, Project
        from diagnosis.serializers import session_ingest_from_body
        from diagnosis.services.evaluation import session_evaluate
        from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge
        from diagnosis.services.evaluation_data import session_data_from_models
        from diagnosis.services.ingestion import session_upsert
        from diagnosis.services.producers import pipeline

        def evaluate(data):
            return pipeline.evaluate(data, config=evaluation_config(), judge=evaluation_judge())

        call_command("migrate", verbosity=0)
        project = Project.objects.create(slug="bench", name="bench")

        def ingest(session_id: str, invocations: int, claims: int, n: int) -> int:
            data = session_ingest_from_body(session_payload(session_id, invocations, claims, n))
            return session_upsert(project=project, data=data).session.pk

        def load(pk: int):
            session = DiagnosisSession.objects.get(pk=pk)
            return session_data_from_models(
                session=session, invocations=session.invocations.all(), refs=EvidenceRef.objects.filter(session=session)
            )

        # Two sets of distinct sessions: one for the pure pipeline, one end to end, so neither
        # profits from text caches the other warmed.
        pure_pks = [ingest(f"pure-{n}", INVOCATIONS, CLAIMS, n) for n in range(SESSIONS)]
        pks = [ingest(f"bench-{n}", INVOCATIONS, CLAIMS, SESSIONS + n) for n in range(SESSIONS)]
        small = ingest("bench-small", 1, 1, 10 * SESSIONS)
        prepared = [load(pk) for pk in pure_pks]
        evaluate(load(small))  # warm-up: jieba's dictionary and regexes, as in a running worker

        pure = []
        for data in prepared:
            started = time.perf_counter()
            evaluate(data)
            pure.append(time.perf_counter() - started)
        repeated = []
        for _ in range(PURE_ROUNDS):
            started = time.perf_counter()
            evaluate(prepared[0])
            repeated.append(time.perf_counter() - started)

        first, again = [], []
        for samples in (first, again):
            for pk in pks:
                started = time.perf_counter()
                session_evaluate(session_pk=pk)
                samples.append(time.perf_counter() - started)

        statements = {}
        for label, pk in (("1 invocation, 1 claim", small), (f"{INVOCATIONS} invocations, {CLAIMS} claims", pks[0])):
            session_evaluate(session_pk=pk)
            with CaptureQueriesContext(connection) as queries:
                session_evaluate(session_pk=pk)
            statements[label] = len(queries)

        verdicts = sorted(set(DiagnosisSession.objects.filter(pk__in=pks).values_list("verifier_verdict", flat=True)))
        print_header(
            "Evaluation pipeline, 20 invocations and 10 claims per session, PostgreSQL",
            sessions=SESSIONS,
            pure_rounds=PURE_ROUNDS,
            claim_check_rows=ClaimCheck.objects.filter(session_id__in=pks).count(),
            verdicts=", ".join(verdicts),
        )
        print(f"   pure computation (evaluate, no database), distinct sessions: {rate(pure)}")
        print(f"   pure computation, the same session again (text caches warm): {rate(repeated)}")
        print(f"   end to end, first evaluation (load + pipeline + merge + claim rows): {rate(first)}")
        print(f"   end to end, re-evaluation of the same evidence: {rate(again)}")
        for label, count in statements.items():
            print(f"   SQL statements per evaluated session ({label}): {count}")
        connection.close()


if __name__ == "__main__":
    main()
