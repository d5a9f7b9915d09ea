"""Ingestion throughput: POST /api/sessions through gunicorn on PostgreSQL, 8 concurrent clients.

Setup: a throwaway PostgreSQL database, gunicorn with 2 gthread workers x 4 threads (this is a
2-core machine), TASKS_BACKEND=database so each request only enqueues the evaluation (one
INSERT) and never runs it in the request, the ingestion throttle lifted. Each session carries 10
tool invocations (10 retrieval calls with one evidence ref each) and 3 claims; every sessionId is
new. Also counts the SQL statements of one ingestion, in process, for 1 and 10 invocations.

Environment: BENCH_DURATION (seconds, default 25), BENCH_CLIENTS (default 8).
"""

import copy
import os
import sys
from pathlib import Path

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
        statement_counts(database)
        from django.db import connections

        connections.close_all()


if __name__ == "__main__":
    main()
