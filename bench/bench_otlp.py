"""OpenTelemetry ingestion over HTTP: spans/s and sessions/s through POST /v1/traces, against the
bare ceiling view in the same run.

Setup: a throwaway PostgreSQL database; gunicorn with 2 gthread workers x 4 threads (a 2-core
machine) on bench/settings_bench.py (the real settings plus `POST /bench/ceiling/<pk>`, one UPDATE
of one row by primary key); TASKS_BACKEND=database, so an ingested session only enqueues its
evaluation; the OTLP throttle lifted.

Each trace is one diagnosis recorded by the real OpenTelemetry SDK with OpenInference attributes:
a root (query, answer, executor_evidence_v2 claims), a planning LLM span, three TOOL spans each with
a RETRIEVER child returning two documents, and a failing tool: 9 spans, 6 evidence refs. Every
request carries new trace ids. Rows, in this order, each BENCH_DURATION seconds (default 8) with
16 and then 64 keep-alive connections: the ceiling; one whole trace per request in
protobuf; the same in OTLP/JSON; each trace in two requests (its 8 child spans, buffered, then its
root, which ingests it; in wrk's order, so a root may come first and its children then re-ingest);
`POST /api/sessions` with the very payload the trace maps to; the ceiling again. Every response must
be 200 (201) without refused spans, and every request of the whole-trace rows a stored session.
Each row gives req/s, spans/s, sessions/s, and the CPU time per request of the gunicorn workers
and of the database's PostgreSQL backends (steadier than req/s on a shared machine).

Load: wrk through bench/wrk.py (one wrk thread), 16 and 64 connections, with a request source
(`TraceBodies`) that writes each request's trace ids into a body encoded once.
"""

import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import psycopg  # noqa: E402

from bench import wrk  # noqa: E402
from bench.common import CpuReading, django_env, gunicorn_server, manage, print_header, throwaway_database  # noqa: E402

DURATION = float(os.environ.get("BENCH_DURATION", "8"))
TRACE_MARKER = b"\xfe\xed\xfa\xce" * 4  # placeholder trace id, replaced per request
PROTOBUF, JSON = "application/x-protobuf", "application/json"
SERVER_ENV = {
    "DJANGO_SETTINGS_MODULE": "bench.settings_bench",
    "TASKS_BACKEND": "database",
    "THROTTLE_OTLP": "100000000/min",
    "THROTTLE_INGESTION": "100000000/min",
}


# --- the traces ----------------------------------------------------------------------------------


def recorded_trace() -> list:
    """One diagnosis, recorded by the OpenTelemetry SDK (OpenInference attributes)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    claims = {
        "version": "executor_evidence_v2",
        "claims": [
            {
                "claimId": f"c{n}",
                "text": "order-service 的数据库连接池耗尽",
                "critical": True,
                "evidence": [{"refId": f"kb://runbooks/order-5xx-{n}.md#0", "excerpt": "连接池耗尽"}],
            }
            for n in range(3)
        ],
    }
    with tracer.start_as_current_span(
        "diagnose",
        attributes={
            "openinference.span.kind": "CHAIN",
            "input.value": "订单服务 5xx 突增，原因是什么？",
            "output.value": "## 根因\norder-service 的数据库连接池耗尽。\n\n## 处理建议\n1. 扩大连接池",
            "selfeval.executor_output": json.dumps(claims, ensure_ascii=False),
        },
    ):
        with tracer.start_as_current_span(
            "plan", attributes={"openinference.span.kind": "LLM", "llm.model_name": "qwen-max"}
        ):
            pass
        for n in range(3):
            with (
                tracer.start_as_current_span(
                    "lookup_knowledge",
                    attributes={
                        "openinference.span.kind": "TOOL",
                        "tool.name": "lookup_knowledge",
                        "input.value": json.dumps({"q": "order-service 5xx", "page": n}),
                    },
                ),
                tracer.start_as_current_span(
                    "vector_search",
                    attributes={
                        "openinference.span.kind": "RETRIEVER",
                        **{
                            f"retrieval.documents.{d}.document.{field}": value
                            for d in range(2)
                            for field, value in (
                                ("id", f"kb://runbooks/order-5xx-{n}.md#{d}"),
                                (
                                    "content",
                                    f"第 {d} 段：当 order-service 的数据库连接池耗尽时，请求排队超时并返回 HTTP 503。"
                                    "过去 10 分钟 59% 的请求等待连接超过 30 秒。",
                                ),
                                ("score", 0.93 - 0.2 * d),
                            )
                        },
                    },
                ),
            ):
                pass
        with tracer.start_as_current_span("query_metrics", attributes={"openinference.span.kind": "TOOL"}) as span:
            span.set_status(Status(StatusCode.ERROR, "prometheus timeout"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def encoded(spans: list, content_type: str) -> bytes:
    """The SDK's own OTLP encoding of `spans`, every trace id replaced by TRACE_MARKER."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from otlp import codec

    message = encode_spans(spans)
    for resource_spans in message.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                span.trace_id = TRACE_MARKER
    return codec.message_encode(message, codec.Encoding(content_type))


# --- the load: wrk through bench/wrk.py ------------------------------------------------------------


@dataclass(frozen=True)
class TraceBodies:
    """A wrk request source (bench/wrk.py): POST `path`, the bodies in turn, each with a new trace id
    written where TRACE_MARKER stands (as 16 bytes in protobuf, 32 hex digits in JSON). Bodies sent
    in turn share one trace id, so `[children, root]` sends each trace in two requests. Ids: the wrk
    run's `run_tag`, its thread, the request number."""

    path: str
    bodies: list[bytes]
    hex_ids: bool

    def lua(self) -> str:
        marker = TRACE_MARKER.hex().encode() if self.hex_ids else TRACE_MARKER
        if not all(marker in body for body in self.bodies):
            raise ValueError("a body does not hold the trace id marker (a compressed body cannot)")
        bodies = ",\n".join(
            "{" + ", ".join(wrk.lua_string(part) for part in body.split(marker)) + "}" for body in self.bodies
        )
        if self.hex_ids:
            trace_id = 'string.format("%08x%08x%08x%08x", run_tag, thread_number, 0, n)'
        else:
            trace_id = "be32(run_tag) .. be32(thread_number) .. be32(0) .. be32(n)"
        return f"""
local bodies = {{
{bodies}
}}
local n, turn = 0, 0
local function be32(v)
  return string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
end
init = function(args) end
request = function()
  if turn == 0 then n = n + 1 end
  local parts = bodies[turn + 1]
  turn = (turn + 1) % #bodies
  local id = {trace_id}
  return wrk.format("POST", "{self.path}", nil, table.concat(parts, id))
end
"""


# --- the run ----------------------------------------------------------------------------------------


def session_payload(spans: list) -> dict:
    """What the trace becomes: the payload `POST /api/sessions` would take for it."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    django.setup()
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from otlp.services.mapping import MatchThresholds, session_payload_from_spans
    from otlp.spans import spans_from_request

    request = ExportTraceServiceRequest.FromString(encoded(spans, PROTOBUF))
    records = [item.record for item in spans_from_request(request, max_attribute_bytes=10**6)]
    return session_payload_from_spans(
        trace_id=TRACE_MARKER.hex(), spans=records, thresholds=MatchThresholds(l0=0.9, l1=0.5)
    ).payload


@dataclass(frozen=True)
class Snapshot:
    sessions: int
    buffering: int
    cpu: CpuReading

    @classmethod
    def take(cls, database: str, base_url: str) -> "Snapshot":
        with psycopg.connect(database) as conn:
            sessions = conn.execute("SELECT count(*) FROM diagnosis_diagnosissession").fetchone()[0]
            buffering = conn.execute("SELECT count(*) FROM otlp_bufferedtrace WHERE state = 'BUFFERING'").fetchone()[0]
        return cls(sessions, buffering, CpuReading.take(database, base_url))


@dataclass(frozen=True)
class Row:
    name: str
    result: wrk.Result
    spans_per_request: float  # 0 for rows that carry no spans
    sessions: int  # sessions stored during the row
    server_cpu_ms: float  # per request
    postgres_cpu_ms: float


def measured(name, source, headers, spans_per_request, *, base, database, connections) -> Row:
    before = Snapshot.take(database, base)
    result = wrk.run(base, source, headers=headers, connections=connections, duration=DURATION)
    wrk.settle(lambda: CpuReading.take(database, base))  # the backlog's sessions count in this row
    after = Snapshot.take(database, base)
    if not result.ok:
        raise SystemExit(f"{name}: {result.summary()}")
    server, postgres = after.cpu.since(before.cpu)
    return Row(
        name,
        result,
        spans_per_request,
        after.sessions - before.sessions,
        server * 1000 / result.requests,
        postgres * 1000 / result.requests,
    )


def main() -> int:
    spans = recorded_trace()
    root = next(span for span in spans if span.parent is None)
    children = [span for span in spans if span is not root]
    whole_pb, whole_json = encoded(spans, PROTOBUF), encoded(spans, JSON)
    split = [encoded(children, PROTOBUF), encoded([root], PROTOBUF)]
    session_json = json.dumps(session_payload(spans), ensure_ascii=False).encode()
    plan = [
        ("ceiling  POST /bench/ceiling/<pk>", None, {}, 0),
        ("OTLP protobuf, a trace per request", TraceBodies("/v1/traces", [whole_pb], False), PROTOBUF, 9),
        ("OTLP/JSON, a trace per request", TraceBodies("/v1/traces", [whole_json], True), JSON, 9),
        ("OTLP protobuf, children then root", TraceBodies("/v1/traces", split, False), PROTOBUF, 4.5),
        ("POST /api/sessions, same session", TraceBodies("/api/sessions", [session_json], True), JSON, 0),
        ("ceiling  POST /bench/ceiling/<pk>", None, {}, 0),
    ]

    tables: dict[int, list[Row]] = {}
    with throwaway_database("otlp") as database:
        manage(database, "migrate", "--noinput")
        key = manage(database, "create_api_key", "--project", "bench", "bench-otlp").strip()
        with gunicorn_server(database, workers=2, threads=4, env=django_env(database, **SERVER_ENV)) as base:
            auth = {"Authorization": f"Api-Key {key}"}
            first = whole_pb.replace(TRACE_MARKER, secrets.token_bytes(16))
            response = httpx.post(f"{base}/v1/traces", content=first, headers={**auth, "Content-Type": PROTOBUF})
            assert response.status_code == 200 and response.content == b"", response.content  # no refused span
            with psycopg.connect(database) as conn:
                pk = conn.execute("SELECT id FROM diagnosis_diagnosissession").fetchone()[0]
            ceiling = wrk.Requests([wrk.Request("POST", f"/bench/ceiling/{pk}")])
            runs = [
                (name, source or ceiling, {**auth, "Content-Type": kind} if kind else auth, spans_per_request)
                for name, source, kind, spans_per_request in plan
            ]
            for _, source, headers, _ in runs:  # warm-up: both workers connected, code paths and plans warm
                wrk.run(base, source, headers=headers, connections=max(wrk.CONNECTIONS), duration=2)
            for connections in wrk.CONNECTIONS:
                tables[connections] = [
                    measured(*run, base=base, database=database, connections=connections) for run in runs
                ]
            buffering = Snapshot.take(database, base).buffering

    print_header(
        "OTLP ingestion over HTTP (POST /v1/traces), against the ceiling and POST /api/sessions",
        server="gunicorn 2 gthread workers x 4 threads, PostgreSQL, TASKS_BACKEND=database",
        load=f"wrk, {wrk.WRK_THREADS} thread, {DURATION:g} s per row",
        trace="9 spans: root, 1 LLM step, 3 tools with a retriever of 2 documents each, 1 failed tool; 3 claims",
        bodies=f"protobuf {len(whole_pb)} B, OTLP/JSON {len(whole_json)} B, session payload {len(session_json)} B",
        load_average_1_5_15_min=" ".join(f"{value:.2f}" for value in os.getloadavg()),
    )
    print(
        f"   {'row':<36} {'conns':>5} {'req/s':>6} {'spans/s':>8} {'sessions/s':>10} {'p50 ms':>7} {'p99 ms':>7}"
        f" {'ratio':>5} {'CPU ms/req':>10} {'PgSQL':>6}"
    )
    for connections, rows in tables.items():
        ceiling_rate = (rows[0].result.per_second + rows[-1].result.per_second) / 2
        for row in rows:
            result = row.result
            spans_s = f"{result.per_second * row.spans_per_request:.0f}" if row.spans_per_request else ""
            sessions_s = "" if row.name.startswith("ceiling") else f"{row.sessions / result.seconds:.0f}"
            print(
                f"   {row.name:<36} {connections:>5} {result.per_second:>6.0f} {spans_s:>8} {sessions_s:>10}"
                f" {result.p50_ms:>7.1f} {result.p99_ms:>7.1f} {result.per_second / ceiling_rate:>5.2f}"
                f" {row.server_cpu_ms:>10.2f} {row.postgres_cpu_ms:>6.2f}"
            )
        drift = abs(rows[0].result.per_second - rows[-1].result.per_second) / ceiling_rate
        print(
            f"   ({connections} connections: the two ceiling rows moved {drift:.0%} between them"
            f"{'; a busy machine, compare with care' if drift > 0.1 else ''})"
        )
    print(
        "   ratio: to the mean of the two ceiling rows of its connection count; "
        "CPU ms/req: of the gunicorn processes, and of the database's PostgreSQL backends"
    )
    print(f"   traces still buffering at the end: {buffering} (children whose root wrk had not sent when it stopped)")
    for connections, rows in tables.items():
        for row in rows[1:3] + rows[4:5]:  # one session per request: every answered request stored one
            if not row.result.requests <= row.sessions <= row.result.requests + connections:
                raise SystemExit(f"{row.name}: {row.result.requests} answered, {row.sessions} sessions stored")
    return 0


if __name__ == "__main__":
    sys.exit(main())
