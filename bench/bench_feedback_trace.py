"""Feedback POST and trace GET under load, against a bare one-row UPDATE view (the stack's ceiling).

Setup: a throwaway PostgreSQL database, gunicorn with 2 gthread workers x 4 threads (2-core
machine), bench-only settings (bench/settings_bench.py) that add `POST /bench/ceiling/<pk>`, a
plain Django view updating one session row by primary key, and `POST /bench/vote-floor/<pk>`, a
plain view doing only the database work of a vote (lock the session row, insert one event, in one
transaction; bench/ceiling_urls.py). Throttles lifted. 200 chat sessions to vote on and 200 to
read are ingested first (evaluated in process), and every session gets one `useful` vote before the
measurement, so measured feedback requests reuse the existing case (the steady state) and every
trace shows a vote and a case.

Load: wrk through bench/wrk.py (one wrk thread), 16 and 64 connections, BENCH_DURATION seconds
per endpoint and connection count (default 9), in 3 rounds of (the ceiling, the vote floor, POST
/api/feedback (useful, API key, sessions in turn), GET /api/trace/<sessionId> of the sessions read
and of the sessions voted on) in one server run; each endpoint as a ratio of the ceiling over the
same rounds, with the CPU time per request of gunicorn and PostgreSQL. Targets (issue 25): feedback
>= 0.85 of the vote floor (its requests/s to the floor's, over the same rounds; the floor is the most
a vote that locks its session can reach) and the trace of the sessions read (unchanged since they
were voted on: the steady state of a trace, read more often than its session is written) >= 0.3 of
the ceiling, at 16 and 64 connections in the same run (a FAIL line and exit status 1 otherwise); the
trace of the sessions each feedback round has just voted on (every one a new version, so each worker
renders it once again) is printed beside the trace's. Then a session with 500 tool invocations: trace
GET latency over one connection, and the SQL query counts of one trace GET (rendered, and cached) and
one vote.
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
SESSIONS = 200
BIG_INVOCATIONS = 500
FEEDBACK_TARGET = 0.85  # of the vote floor
TRACE_TARGET = 0.3  # of the ceiling
SERVER_ENV = {
    "DJANGO_SETTINGS_MODULE": "bench.settings_bench",
    "TASKS_BACKEND": "immediate",
    "THROTTLE_INGESTION": "100000000/min",
    "THROTTLE_FEEDBACK": "100000000/min",
    "THROTTLE_TRACE": "100000000/min",
}


def setup_sessions(base: str, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        session_ids = [f"{prefix}-{number}" for prefix in ("fb", "tr") for number in range(SESSIONS)]
        for session_id in session_ids:
            response = client.post("/api/sessions", json=chat_session_payload(session_id, 1))
            assert response.status_code == 201, response.text
        response = client.post("/api/sessions", json=chat_session_payload("big-500", BIG_INVOCATIONS))
        assert response.status_code == 201, response.text
        for session_id in session_ids:  # first vote creates each case; measured votes reuse it
            response = client.post("/api/feedback", json={"sessionId": session_id, "feedback": "useful"})
            assert response.status_code == 200, response.text


def session_pks(database: str) -> list[int]:
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT id FROM diagnosis_diagnosissession WHERE session_id LIKE 'fb-%%' ORDER BY id"
        ).fetchall()
    return [row[0] for row in rows]


def http_load(database: str) -> bool:
    """The wrk runs; True when every target is met."""
    key = manage(database, "create_api_key", "--project", "bench", "bench-client").strip()
    auth = {"Authorization": f"Api-Key {key}"}
    env = django_env(database, **SERVER_ENV)
    with gunicorn_server(database, workers=2, threads=4, env=env) as base:
        setup_sessions(base, auth)
        pks = session_pks(database)
        ceiling = wrk.Endpoint(
            "ceiling  POST /bench/ceiling/<pk>",
            wrk.Requests([wrk.Request("POST", f"/bench/ceiling/{pk}") for pk in pks]),
        )
        floor = wrk.Endpoint(
            "floor    POST /bench/vote-floor/<pk>",
            wrk.Requests([wrk.Request("POST", f"/bench/vote-floor/{pk}") for pk in pks]),
        )
        feedback = wrk.Endpoint(
            "feedback POST /api/feedback (useful)",
            wrk.Requests(
                [
                    wrk.Request(
                        "POST", "/api/feedback", json.dumps({"sessionId": f"fb-{i}", "feedback": "useful"}).encode()
                    )
                    for i in range(SESSIONS)
                ]
            ),
            {**auth, "Content-Type": "application/json"},
        )
        trace = wrk.Endpoint(
            "trace    GET /api/trace/<id>, unchanged",
            wrk.Requests([wrk.Request("GET", f"/api/trace/tr-{i}") for i in range(SESSIONS)]),
            auth,
        )
        voted_trace = wrk.Endpoint(
            "trace    GET /api/trace/<id>, just voted",
            wrk.Requests([wrk.Request("GET", f"/api/trace/fb-{i}") for i in range(SESSIONS)]),
            auth,
        )
        rows = wrk.against_ceiling(
            base,
            ceiling,
            [floor, feedback, trace, voted_trace],
            duration=DURATION,
            cpu=lambda: CpuReading.take(database, base),
        )
        big = wrk.run(
            base, wrk.Requests([wrk.Request("GET", "/api/trace/big-500")]), connections=1, duration=5, headers=auth
        )
        size = len(httpx.get(f"{base}/api/trace/big-500", headers=auth).content)
    print_header(
        "feedback and trace against the ceiling view",
        server="gunicorn 2 gthread workers x 4 threads, PostgreSQL, bench/settings_bench.py",
        load=f"wrk, {wrk.WRK_THREADS} thread, {DURATION:g} s per run",
        load_average_1_5_15_min=" ".join(f"{value:.2f}" for value in os.getloadavg()),
    )
    wrk.print_rows(rows)
    print_header(
        f"trace GET of a session with {BIG_INVOCATIONS} invocations (one connection)",
        result=big.summary(),
        body=f"{size / 1024:.0f} KiB",
    )
    print_header("targets")
    floors = {row.result.connections: row for row in rows if row.endpoint == floor.name}
    voted = {row.result.connections: row.ratio for row in rows if row.endpoint == voted_trace.name}
    verdicts = []
    for row in rows:
        if row.endpoint == feedback.name:
            vote_floor = floors[row.result.connections]
            label = f"feedback / vote floor, {row.result.connections} connections"
            verdicts.append(wrk.verdict(label, row.ratio / vote_floor.ratio, FEEDBACK_TARGET))
            print(f"         (of the ceiling: feedback {row.ratio:.2f}, the vote floor {vote_floor.ratio:.2f})")
    for row in rows:
        if row.endpoint == trace.name:
            label = f"trace / ceiling, {row.result.connections} connections"
            verdicts.append(wrk.verdict(label, row.ratio, TRACE_TARGET))
            print(f"         (the trace of sessions just voted on: {voted[row.result.connections]:.2f})")
    return all(verdicts)


def query_counts(database: str) -> None:
    """SQL queries of one trace GET (1 and 500 invocations, rendered; then cached) and of one vote, in
    this process, key cached."""
    os.environ.update(django_env(database, **SERVER_ENV))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from core.tenancy.services import project_api_key_create

    key = project_api_key_create(project_slug="bench", key_name="count").key
    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_HOST="localhost")
    assert client.get("/api/trace/fb-1").status_code == 200  # the key's first use reads its row into the cache
    counts = {}
    for label, session_id in (("rendered", "fb-0"), ("rendered", "big-500"), ("cached", "fb-0")):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/api/trace/{session_id}")
        assert response.status_code == 200, response.content
        counts[label, session_id] = len(queries)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            "/api/feedback", {"sessionId": "fb-1", "feedback": "useful"}, content_type="application/json"
        )
    assert response.status_code == 200, response.content
    print_header(
        "SQL queries per request (in process)",
        trace_1_invocation=counts["rendered", "fb-0"],
        trace_500_invocations=counts["rendered", "big-500"],
        trace_cached=counts["cached", "fb-0"],
        feedback_useful_existing_case=len(queries),
    )
    for query in queries.captured_queries:
        print(f"      {query['sql'][:160]}")
    if counts["rendered", "fb-0"] != counts["rendered", "big-500"]:
        raise SystemExit("trace query count grows with the number of invocations")
    from django.db import connections

    connections.close_all()


def main() -> int:
    with throwaway_database("feedback") as database:
        manage(database, "migrate", "--noinput")
        met = http_load(database)
        query_counts(database)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
