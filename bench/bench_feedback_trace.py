"""Feedback POST and trace GET under load, against a bare one-row UPDATE view (the stack's ceiling).

Setup: a throwaway PostgreSQL database, gunicorn with 2 gthread workers x 4 threads (2-core
machine), bench-only settings (bench/settings_bench.py) that add `POST /bench/ceiling/<pk>`: a
plain Django view updating one session row by primary key. Throttles lifted. 200 chat sessions
are ingested first (evaluated in process), and every session gets one `useful` vote before the
measurement, so measured feedback requests reuse the existing case (the steady state).

Measured, for 16 and 64 concurrent clients, BENCH_DURATION seconds each (default 8): the
ceiling, POST /api/feedback (useful, sessions round-robin) and GET /api/trace/<sessionId>;
requests/s, p50/p99, and feedback / ceiling. Then a session with 500 tool invocations: trace GET
latency (sequential) and its SQL query count, compared with a 1-invocation session.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import psycopg  # noqa: E402

from bench.common import (  # noqa: E402
    chat_session_payload,
    django_env,
    gunicorn_server,
    manage,
    percentile,
    print_header,
    run_load,
    throwaway_database,
)

DURATION = float(os.environ.get("BENCH_DURATION", "8"))
SESSIONS = 200
BIG_INVOCATIONS = 500
MAX_REQUESTS = 100_000
SERVER_ENV = {
    "DJANGO_SETTINGS_MODULE": "bench.settings_bench",
    "TASKS_BACKEND": "immediate",
    "THROTTLE_INGESTION": "100000000/min",
    "THROTTLE_FEEDBACK": "100000000/min",
    "THROTTLE_TRACE": "100000000/min",
}


def setup_sessions(base: str, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        for number in range(SESSIONS):
            response = client.post("/api/sessions", json=chat_session_payload(f"fb-{number}", 1))
            assert response.status_code == 201, response.text
        response = client.post("/api/sessions", json=chat_session_payload("big-500", BIG_INVOCATIONS))
        assert response.status_code == 201, response.text
        for number in range(SESSIONS):  # first vote creates each case; measured votes reuse it
            response = client.post("/api/feedback", json={"sessionId": f"fb-{number}", "feedback": "useful"})
            assert response.status_code == 200, response.text


def session_pks(database: str) -> list[int]:
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT id FROM diagnosis_diagnosissession WHERE session_id LIKE 'fb-%%' ORDER BY id"
        ).fetchall()
    return [row[0] for row in rows]


def http_load(database: str) -> None:
    key = manage(database, "create_api_key", "--project", "bench", "bench-client").strip()
    headers = {"Authorization": f"Api-Key {key}"}
    env = django_env(database, **SERVER_ENV)
    with gunicorn_server(database, workers=2, threads=4, env=env) as base:
        setup_sessions(base, headers)
        pks = session_pks(database)

        def ceiling(client, worker, n):
            return client.post(f"/bench/ceiling/{pks[(worker * 31 + n) % len(pks)]}")

        # Bodies encoded once: the load client shares the 2 cores with the server, and the
        # ceiling's requests have no body to encode; only the server's work should differ.
        bodies = [json.dumps({"sessionId": f"fb-{i}", "feedback": "useful"}).encode() for i in range(SESSIONS)]
        json_type = {"Content-Type": "application/json"}

        def feedback(client, worker, n):
            return client.post("/api/feedback", content=bodies[(worker * 31 + n) % SESSIONS], headers=json_type)

        def trace(client, worker, n):
            return client.get(f"/api/trace/fb-{(worker * 31 + n) % SESSIONS}")

        run_load(feedback, base_url=base, concurrency=8, duration=2, headers=headers)  # warm both workers
        rates: dict[tuple[str, int], float] = {}
        for clients in (16, 64):
            for name, send in (("ceiling", ceiling), ("feedback", feedback), ("trace", trace)):
                result = run_load(
                    send,
                    base_url=base,
                    concurrency=clients,
                    duration=DURATION,
                    headers=headers,
                    max_requests=MAX_REQUESTS,
                )
                rates[(name, clients)] = result.per_second
                print_header(f"{name}, {clients} clients", result=result.summary())
                if result.errors or set(result.statuses) != {200}:
                    raise SystemExit(f"unexpected responses: {result.statuses} {result.errors[:2]}")
        print_header("feedback / ceiling (target >= 0.7)")
        for clients in (16, 64):
            ratio = rates[("feedback", clients)] / rates[("ceiling", clients)]
            print(
                f"   {clients} clients: {rates[('feedback', clients)]:.0f} / {rates[('ceiling', clients)]:.0f} req/s"
                f" = {ratio:.2f}; trace {rates[('trace', clients)]:.0f} req/s"
            )

        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            latencies = []
            size = 0
            for _ in range(30):
                response = client.get("/api/trace/big-500")
                assert response.status_code == 200, response.text
                latencies.append(response.elapsed.total_seconds() * 1000)
                size = len(response.content)
        print_header(
            f"trace GET of a session with {BIG_INVOCATIONS} invocations (sequential, 30 requests)",
            latency=f"p50 {percentile(latencies, 50):.1f} ms, p99 {percentile(latencies, 99):.1f} ms",
            body=f"{size / 1024:.0f} KiB",
        )


def query_counts(database: str) -> None:
    """SQL queries of one trace GET, in this process, for 1 and 500 invocations."""
    os.environ.update(django_env(database, **SERVER_ENV))
    import django

    django.setup()
    from diagnosis.services.projects import project_api_key_create
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    key = project_api_key_create(project_slug="bench", key_name="count").key
    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_HOST="localhost")
    counts = {}
    for session_id in ("fb-0", "big-500"):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/api/trace/{session_id}")
        assert response.status_code == 200, response.content
        counts[session_id] = len(queries)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            "/api/feedback", {"sessionId": "fb-1", "feedback": "useful"}, content_type="application/json"
        )
    assert response.status_code == 200, response.content
    print_header(
        "SQL queries per request (in process)",
        trace_1_invocation=counts["fb-0"],
        trace_500_invocations=counts["big-500"],
        feedback_useful_existing_case=f"{len(queries)} (API key, then one statement; no BEGIN/COMMIT)",
    )
    if counts["fb-0"] != counts["big-500"]:
        raise SystemExit("trace query count grows with the number of invocations")
    from django.db import connections

    connections.close_all()


def main() -> None:
    with throwaway_database("feedback") as database:
        manage(database, "migrate", "--noinput")
        http_load(database)
        query_counts(database)


if __name__ == "__main__":
    main()
