"""Ingestion throughput: POST /api/sessions through gunicorn on PostgreSQL, 8 concurrent clients.

Setup: a throwaway PostgreSQL database, gunicorn with 2 gthread workers x 4 threads (this is a
2-core machine), TASKS_BACKEND=database so each request only enqueues the evaluation (one
INSERT) and never runs it in the request, the ingestion throttle lifted. Each session carries 10
tool invocations (10 retrieval calls with one evidence ref each) and 3 claims; every sessionId is
new. Also counts the SQL statements of one ingestion, in process, for 1 and 10 invocations.

Batch against single (`batch_against_single`): the same sessions through wrk (Debian's package),
BENCH_BATCH_CLIENTS keep-alive connections (default 2, so that a batch answers within wrk's 10 s on
the shared machine), BENCH_BATCH_DURATION seconds a row (default 15): one session per
`POST /api/sessions`, then BENCH_BATCH_SIZES sessions (default 10 and 25) per
`POST /api/sessions/batch` (a JSON array), every sessionId new; sessions/s per row and the ratio to
single POSTs. Every answer must be 200/201 and every item stored. wrk runs through bench_otlp's
runner until bench/wrk.py, the shared one, is on main.

Environment: BENCH_DURATION (seconds, default 25), BENCH_CLIENTS (default 8), BENCH_BATCH_DURATION,
BENCH_BATCH_CLIENTS, BENCH_BATCH_SIZES.
"""

import copy
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    chat_session_payload,
    django_env,
    gunicorn_server,
    manage,
    print_header,
    run_load,
    throwaway_database,
)

DURATION = float(os.environ.get("BENCH_DURATION", "25"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
BATCH_DURATION = float(os.environ.get("BENCH_BATCH_DURATION", "15"))
BATCH_CLIENTS = int(os.environ.get("BENCH_BATCH_CLIENTS", "2"))
BATCH_SIZES = tuple(int(size) for size in os.environ.get("BENCH_BATCH_SIZES", "10,25").split(","))
INVOCATIONS = 10
SERVER_ENV = {"TASKS_BACKEND": "database", "THROTTLE_INGESTION": "100000000/min"}


def http_load(database: str) -> None:
    key = manage(database, "create_api_key", "--project", "bench", "bench-client").strip()
    template = chat_session_payload("x", INVOCATIONS)
    run_id = os.getpid()

    phase = ["warmup"]

    def send(client, worker, n):
        payload = copy.copy(template)
        payload["sessionId"] = f"bench-{run_id}-{phase[0]}-{worker}-{n}"
        return client.post("/api/sessions", json=payload)

    with gunicorn_server(database, workers=2, threads=4, env=django_env(database, **SERVER_ENV)) as base:
        headers = {"Authorization": f"Api-Key {key}"}
        run_load(send, base_url=base, concurrency=CLIENTS, duration=3, headers=headers)
        phase[0] = "measured"
        result = run_load(send, base_url=base, concurrency=CLIENTS, duration=DURATION, headers=headers)
    print_header(
        "HTTP ingestion",
        setup=f"gunicorn 2 workers x 4 gthread threads, PostgreSQL, TASKS_BACKEND=database, {CLIENTS} clients",
        payload=f"{INVOCATIONS} tool invocations, {INVOCATIONS} evidence refs, 3 claims per session",
        result=result.summary("sessions"),
    )
    if result.errors or set(result.statuses) != {201}:
        raise SystemExit(f"unexpected responses: {result.statuses} {result.errors[:2]}")


ID_MARKER = "@@SESSION-ID@@"


@dataclass(frozen=True)
class NumberedSessions:
    """wrk request source: POST `path` with `body`, each ID_MARKER in it replaced by a sessionId new
    on every request ("<tag>-<wrk thread>-<request number>", then the item's own suffix)."""

    path: str
    body: bytes
    tag: int

    def lua(self) -> str:
        from bench.bench_otlp import lua_bytes

        parts = ", ".join(lua_bytes(part) for part in self.body.split(ID_MARKER.encode()))
        return f"""
local parts = {{{parts}}}
local n = 0
init = function(args) end
request = function()
  n = n + 1
  return wrk.format("POST", "{self.path}", nil, table.concat(parts, string.format("b%d-%d-%d", {self.tag}, thread_number, n)))
end
"""


def batch_against_single(database: str) -> None:
    """Sessions/s through single POSTs and through batches of BATCH_SIZES, with wrk."""
    from bench.bench_otlp import _wrk_run

    key = manage(database, "create_api_key", "--project", "bench-batch", "batch-client").strip()
    headers = {"Authorization": f"Api-Key {key}", "Content-Type": "application/json"}

    def session(suffix: str) -> dict:
        return chat_session_payload(f"{ID_MARKER}{suffix}", INVOCATIONS)

    sources = [("single  POST /api/sessions", 1, "/api/sessions", json.dumps(session("")))]
    sources += [
        (
            f"batch   POST /api/sessions/batch x{size}",
            size,
            "/api/sessions/batch",
            json.dumps([session(f"-{i}") for i in range(size)]),
        )
        for size in BATCH_SIZES
    ]
    rows, sent = [], 0
    with gunicorn_server(database, workers=2, threads=4, env=django_env(database, **SERVER_ENV)) as base:
        for tag, (name, size, path, body) in enumerate(sources):
            for run, seconds in ((2 * tag, 3), (2 * tag + 1, BATCH_DURATION)):  # a warm-up, then the row
                source = NumberedSessions(path, body.encode(), run)
                result = _wrk_run(base, source, headers=headers, clients=BATCH_CLIENTS, duration=seconds)
                if result.errors or result.bad_status:
                    raise SystemExit(f"{name}: {result}")
                sent += size * result.requests
            if not result.requests:
                raise SystemExit(f"{name}: no request completed in {BATCH_DURATION:g} s")
            rows.append((name, size, len(body), result))
    # A batch answers 200 even for an item it refused: the stored rows say that every item was created.
    with psycopg.connect(database) as conn:
        stored = conn.execute(
            "SELECT count(*) FROM diagnosis_diagnosissession s JOIN diagnosis_project p ON p.id = s.project_id"
            " WHERE p.slug = 'bench-batch'"
        ).fetchone()[0]
    # (more when requests still running as wrk stopped completed afterwards)
    if stored < sent:
        raise SystemExit(f"{sent} sessions answered, {stored} stored: some batch items were refused")
    print_header(
        "Batch against single ingestion (wrk)",
        setup=f"gunicorn 2 workers x 4 gthread threads, PostgreSQL, TASKS_BACKEND=database, {BATCH_CLIENTS} connections",
        payload=f"{INVOCATIONS} tool invocations, {INVOCATIONS} evidence refs, 3 claims per session",
        load_average_1_5_15_min=" ".join(f"{value:.2f}" for value in os.getloadavg()),
    )
    single = rows[0][3].per_second
    print(
        f"   {'endpoint':<40} {'body':>9} {'req/s':>7} {'sessions/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'x single':>9}"
    )
    for name, size, length, result in rows:
        print(
            f"   {name:<40} {length:>9} {result.per_second:>7.1f} {result.per_second * size:>11.1f}"
            f" {result.p50_ms:>8.1f} {result.p99_ms:>8.1f} {result.per_second * size / single:>9.2f}"
        )
    print(f"   every item stored: {stored} sessions for {sent} answered (warm-ups included)")


def statement_counts(database: str) -> None:
    """SQL statements of one ingestion, counted with connection.execute_wrapper, in this process."""
    os.environ.update(django_env(database, **SERVER_ENV))
    import django

    django.setup()
    from diagnosis.services.projects import project_api_key_create
    from django.db import connection
    from django.test import Client

    from diagnosis.models import Project
    from diagnosis.serializers import SessionIngestSerializer
    from diagnosis.services.ingestion import session_upsert

    statements: list[str] = []

    def count(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    key = project_api_key_create(project_slug="bench-count", key_name="count").key
    project = Project.objects.get(slug="bench-count")
    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_HOST="localhost")
    rows = []
    for invocations in (1, 10):
        for attempt in ("create", "replace"):
            payload = chat_session_payload(f"count-{invocations}", invocations)
            serializer = SessionIngestSerializer(data=payload)
            serializer.is_valid(raise_exception=True)
            statements.clear()
            with connection.execute_wrapper(count):
                session_upsert(project=project, data=serializer.validated_data)
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


def main() -> None:
    with throwaway_database("ingest") as database:
        manage(database, "migrate", "--noinput")
        http_load(database)
        batch_against_single(database)
        statement_counts(database)
        from django.db import connections

        connections.close_all()


if __name__ == "__main__":
    main()
