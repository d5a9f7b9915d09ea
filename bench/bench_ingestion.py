"""Ingestion throughput: POST /api/sessions through gunicorn on PostgreSQL, against the ceiling view.

Setup: a throwaway PostgreSQL database, gunicorn with 2 gthread workers x 4 threads (this is a
2-core machine) on bench/settings_bench.py (the real settings plus the bare ceiling view `POST
/bench/ceiling/<pk>`, one UPDATE of one row by primary key), TASKS_BACKEND=database so each request
only enqueues the evaluation (one INSERT) and never runs it in the request, the ingestion throttle
lifted. Each session carries 10 tool invocations (10 retrieval calls with one evidence ref each) and
3 claims; every sessionId is new (wrk writes a new one into the body encoded once).

Load: wrk through bench/wrk.py (one wrk thread), 16 and 64 connections, BENCH_DURATION seconds per
endpoint and connection count (default 9), in 3 rounds of (the ceiling, POST /api/sessions) in one
server run: the ingestion rate as a ratio of the ceiling's over the same rounds, with the CPU time
per request of gunicorn and PostgreSQL; the target (issue 25) is 0.2 of the ceiling at both
connection counts, a PASS or FAIL line each (exit 1 when missed). Also counts the SQL statements
of one ingestion, in process, for 1 and 10 invocations (it fails when the count grows with the
invocations).

Batch against single: the same new sessions one per POST /api/sessions and BENCH_BATCH_SIZE
(default 10) per POST /api/sessions/batch, BENCH_BATCH_CONNECTIONS connections (default 4), in one
server run with the ceiling: sessions/s of each and their ratio. The statements per batch item are
asserted constant in tests/diagnosis (test_batch_api).
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import psycopg  # noqa: E402

from bench import wrk  # noqa: E402
from bench.common import (  # noqa: E402
    CpuReading,
    chat_session_payload,
    django_env,
    gunicorn_server,
    manage,
    print_header,
    throwaway_database,
)

DURATION = float(os.environ.get("BENCH_DURATION", "9"))
# Issue 25: a new 10-invocation session at 0.2 of the ceiling or better, at 16 and 64 connections.
INGESTION_TARGET = 0.2
INVOCATIONS = 10
BATCH_SIZE = int(os.environ.get("BENCH_BATCH_SIZE", "10"))
BATCH_CONNECTIONS = int(os.environ.get("BENCH_BATCH_CONNECTIONS", "4"))
SERVER_ENV = {
    "DJANGO_SETTINGS_MODULE": "bench.settings_bench",
    "TASKS_BACKEND": "database",
    "THROTTLE_INGESTION": "100000000/min",
}


def http_load(database: str) -> bool:
    key = manage(database, "create_api_key", "--project", "bench", "bench-client").strip()
    auth = {"Authorization": f"Api-Key {key}"}
    body = json.dumps(chat_session_payload(wrk.ID_MARKER.decode(), INVOCATIONS), ensure_ascii=False).encode()
    with gunicorn_server(database, workers=2, threads=4, env=django_env(database, **SERVER_ENV)) as base:
        response = httpx.post(
            f"{base}/api/sessions",
            content=body.replace(wrk.ID_MARKER, b"first"),
            headers={**auth, "Content-Type": "application/json"},
        )
        assert response.status_code == 201, response.text
        with psycopg.connect(database) as conn:
            pk = conn.execute("SELECT id FROM diagnosis_diagnosissession").fetchone()[0]
        ceiling = wrk.Endpoint(
            "ceiling  POST /bench/ceiling/<pk>", wrk.Requests([wrk.Request("POST", f"/bench/ceiling/{pk}")])
        )
        ingestion = wrk.Endpoint(
            "ingest   POST /api/sessions (new session)",
            wrk.Numbered("POST", "/api/sessions", body),
            {**auth, "Content-Type": "application/json"},
        )
        rows = wrk.against_ceiling(
            base, ceiling, [ingestion], duration=DURATION, cpu=lambda: CpuReading.take(database, base)
        )
    print_header(
        "HTTP ingestion against the ceiling view",
        server="gunicorn 2 workers x 4 gthread threads, PostgreSQL, TASKS_BACKEND=database",
        load=f"wrk, {wrk.WRK_THREADS} thread, {DURATION:g} s per run",
        payload=f"{INVOCATIONS} tool invocations, {INVOCATIONS} evidence refs, 3 claims per session, {len(body)} B",
        load_average_1_5_15_min=" ".join(f"{value:.2f}" for value in os.getloadavg()),
    )
    wrk.print_rows(rows)
    met = [
        wrk.verdict(f"ingestion / ceiling, {row.result.connections} connections", row.ratio, INGESTION_TARGET)
        for row in rows
        if row.endpoint == ingestion.name
    ]
    batch_against_single(database, auth)
    return all(met)


def batch_against_single(database: str, auth: dict[str, str]) -> None:
    """The same new sessions one per POST /api/sessions and BATCH_SIZE per POST /api/sessions/batch
    (a JSON array), BATCH_CONNECTIONS connections (a batch of 10 full ingestions answers within
    wrk's timeout on the shared machine): sessions/s of each and their ratio."""
    single = json.dumps(chat_session_payload(wrk.ID_MARKER.decode(), INVOCATIONS), ensure_ascii=False).encode()
    items = [chat_session_payload(f"{wrk.ID_MARKER.decode()}-{index}", INVOCATIONS) for index in range(BATCH_SIZE)]
    batch = json.dumps(items, ensure_ascii=False).encode()
    headers = {**auth, "Content-Type": "application/json"}
    with gunicorn_server(database, workers=2, threads=4, env=django_env(database, **SERVER_ENV)) as base:
        with psycopg.connect(database) as conn:
            pk = conn.execute("SELECT min(id) FROM diagnosis_diagnosissession").fetchone()[0]
        ceiling = wrk.Endpoint(
            "ceiling  POST /bench/ceiling/<pk>", wrk.Requests([wrk.Request("POST", f"/bench/ceiling/{pk}")])
        )
        one = wrk.Endpoint("single   POST /api/sessions", wrk.Numbered("POST", "/api/sessions", single), headers)
        many = wrk.Endpoint(
            f"batch    POST /api/sessions/batch ({BATCH_SIZE} sessions)",
            wrk.Numbered("POST", "/api/sessions/batch", batch),
            headers,
        )
        rows = wrk.against_ceiling(base, ceiling, [one, many], duration=DURATION, connections=(BATCH_CONNECTIONS,))
    print_header(
        "Batch ingestion against single POSTs",
        load=f"wrk, {wrk.WRK_THREADS} thread, {BATCH_CONNECTIONS} connections, {DURATION:g} s per endpoint",
        payload=f"{INVOCATIONS} tool invocations per session, {BATCH_SIZE} sessions per batch ({len(batch)} B)",
    )
    wrk.print_rows(rows)
    by_name = {row.endpoint: row.result.per_second for row in rows}
    single_rate, batch_rate = by_name[one.name], by_name[many.name] * BATCH_SIZE
    print(
        f"   sessions/s: single {single_rate:.1f}, batch {batch_rate:.1f} "
        f"({batch_rate / single_rate if single_rate else 0:.2f} x single)"
    )


def statement_counts(database: str) -> None:
    """SQL statements of one ingestion, counted with connection.execute_wrapper, in this process."""
    os.environ.update(django_env(database, **SERVER_ENV))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    from core.tenancy.models import Project
    from core.tenancy.services import project_api_key_create
    from diagnosis.serializers import session_ingest_from_body
    from diagnosis.services.ingestion import session_upsert

    statements: list[str] = []

    def count(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    key = project_api_key_create(project_slug="bench-count", key_name="count").key
    project = Project.objects.get(slug="bench-count")
    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_HOST="localhost")
    # The key's first use reads its row into the cache; the counted requests find it there.
    warm = client.post("/api/sessions", chat_session_payload("count-warm", 1), content_type="application/json")
    assert warm.status_code == 201, warm.content
    rows = []
    for invocations in (1, 10):
        for attempt in ("create", "replace"):
            payload = chat_session_payload(f"count-{invocations}", invocations)
            data = session_ingest_from_body(payload)
            statements.clear()
            with connection.execute_wrapper(count):
                session_upsert(project=project, data=data)
            service = len(statements)
            payload["sessionId"] = f"http-{invocations}"
            statements.clear()
            with connection.execute_wrapper(count):
                response = client.post("/api/sessions", payload, content_type="application/json")
            assert response.status_code in (200, 201), response.content
            rows.append((invocations, attempt, service, len(statements)))
    print_header("SQL statements per ingested session (session_upsert / whole POST request)")
    for invocations, attempt, service, request in rows:
        print(
            f"   {invocations:>2} invocations, {attempt:<7}: {service:>2} in session_upsert, {request:>2} per request"
        )
    by_size = {(i, a): (s, r) for i, a, s, r in rows}
    if any(by_size[(1, a)] != by_size[(10, a)] for a in ("create", "replace")):
        raise SystemExit("statement count grows with the number of invocations")


def main() -> int:
    with throwaway_database("ingest") as database:
        manage(database, "migrate", "--noinput")
        met = http_load(database)
        statement_counts(database)
        from django.db import connections

        connections.close_all()
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
