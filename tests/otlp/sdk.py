"""Traces made by the real OpenTelemetry SDK, as instrumented agents send them.

`openinference_agent` instruments like OpenInference (LangChain / LlamaIndex instrumentors, the
`openinference.span.kind` attribute); `genai_agent` like the OpenTelemetry GenAI semantic
conventions (`gen_ai.operation.name`). Both record one diagnosis: a question, a knowledge lookup
whose retriever finds the runbook chunk the claim cites, a failed metrics call, and the answer.
Spans are encoded by the SDK's own OTLP encoder (what its exporter sends); `otlp_json` gives the
OTLP/JSON mapping of the same request (hex ids), as JSON exporters send it.
"""

import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, Status, StatusCode, Tracer, set_span_in_context

from otlp import codec

QUERY = "订单服务 5xx 突增，原因是什么？"
ANSWER = "order-service 的数据库连接池耗尽，导致 5xx 突增。"
RUNBOOK_ID = "kb://runbooks/order-5xx.md#1"
RUNBOOK = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。"
LOGS_ID = "loki://order-service/1"
LOGS = "HikariPool-1 - Connection is not available, request timed out after 30000ms."

EXECUTOR_OUTPUT = {
    "version": "executor_evidence_v2",
    "claims": [
        {
            "claimId": "c1",
            "text": "order-service 的数据库连接池耗尽",
            "critical": True,
            "evidence": [{"refId": RUNBOOK_ID, "excerpt": "连接池耗尽"}],
        }
    ],
    "finalAnswer": "",
}


class Recorder:
    """A tracer provider whose finished spans stay in memory until taken."""

    def __init__(self, resource: dict[str, Any] | None = None) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create(resource or {"service.name": "diagnosis-agent"}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer: Tracer = self.provider.get_tracer("tests.otlp")

    def take(self) -> list[ReadableSpan]:
        spans = list(self.exporter.get_finished_spans())
        self.exporter.clear()
        return spans


def request_of(spans: list[ReadableSpan]) -> ExportTraceServiceRequest:
    return encode_spans(spans)


def protobuf_body(spans: list[ReadableSpan]) -> bytes:
    return request_of(spans).SerializeToString()


def otlp_json(message: ExportTraceServiceRequest) -> bytes:
    """OTLP/JSON: proto3 JSON with trace and span ids in hex instead of base64."""
    return codec.message_encode(message, codec.Encoding.JSON)


def gzipped(body: bytes) -> bytes:
    return gzip.compress(body)


def trace_hex(spans: list[ReadableSpan]) -> str:
    return format(spans[0].context.trace_id, "032x")


def late_span(
    tracer: Tracer, parent: ReadableSpan, name: str, attributes: dict[str, Any], *, duration_ns: int = 10**6
) -> None:
    """A child of `parent` that ends after it (an asynchronous tool call, a slow exporter)."""
    context = set_span_in_context(NonRecordingSpan(parent.context))
    span = tracer.start_span(name, context=context, attributes=attributes, start_time=parent.end_time)
    span.end(end_time=parent.end_time + duration_ns)


@contextmanager
def _failing(span) -> Iterator[None]:
    try:
        yield
    except TimeoutError as error:
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, str(error)))


def openinference_agent(
    tracer: Tracer,
    *,
    query: str = QUERY,
    answer: str = ANSWER,
    session_id: str | None = None,
    conversation_id: str | None = None,
    root_attributes: dict[str, Any] | None = None,
) -> None:
    """One agent run instrumented with OpenInference's conventions: one turn (`session_id`, SelfEval's
    own attribute, names it; else it is the trace id) of a conversation (OpenInference's `session.id`)."""
    attributes = {
        "openinference.span.kind": "CHAIN",
        "input.value": json.dumps({"question": query}, ensure_ascii=False),
        "input.mime_type": "application/json",
        "output.value": answer,
        "selfeval.executor_output": json.dumps(EXECUTOR_OUTPUT, ensure_ascii=False),
        **(root_attributes or {}),
    }
    if session_id:
        attributes["selfeval.session_id"] = session_id
    if conversation_id:
        attributes["session.id"] = conversation_id
    with tracer.start_as_current_span("diagnose", attributes=attributes):
        with tracer.start_as_current_span(
            "plan",
            attributes={
                "openinference.span.kind": "LLM",
                "llm.model_name": "qwen-max",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": query,
            },
        ):
            pass
        with (
            tracer.start_as_current_span(
                "lookup_knowledge",
                attributes={
                    "openinference.span.kind": "TOOL",
                    "tool.name": "lookup_knowledge",
                    "input.value": json.dumps({"q": "order-service 5xx"}),
                    "output.value": "1 chunk",
                },
            ),
            tracer.start_as_current_span(
                "vector_search",
                attributes={
                    "openinference.span.kind": "RETRIEVER",
                    "input.value": "order-service 5xx",
                    "retrieval.documents.0.document.id": RUNBOOK_ID,
                    "retrieval.documents.0.document.content": RUNBOOK,
                    "retrieval.documents.0.document.score": 0.93,
                    "retrieval.documents.0.document.metadata": json.dumps({"source": "kb://runbooks/order-5xx.md"}),
                },
            ),
        ):
            pass
        with tracer.start_as_current_span(
            "search_logs",
            attributes={
                "openinference.span.kind": "RETRIEVER",
                "input.value": "order-service errors",
                "retrieval.documents.0.document.id": LOGS_ID,
                "retrieval.documents.0.document.content": LOGS,
                "retrieval.documents.0.document.score": 0.62,
            },
        ):
            pass
        with (
            tracer.start_as_current_span(
                "query_metrics",
                attributes={"openinference.span.kind": "TOOL", "tool.name": "query_metrics", "input.value": "{}"},
                record_exception=False,
                set_status_on_exception=False,
            ) as span,
            _failing(span),
        ):
            raise TimeoutError("prometheus timeout")


def genai_agent(tracer: Tracer, *, query: str = QUERY, answer: str = ANSWER) -> None:
    """One agent run instrumented with the OpenTelemetry GenAI semantic conventions."""
    with tracer.start_as_current_span(
        "invoke_agent diagnoser",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "diagnoser",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": query}]}], ensure_ascii=False
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}],
                ensure_ascii=False,
            ),
            "selfeval.executor_output": json.dumps(EXECUTOR_OUTPUT, ensure_ascii=False),
        },
    ):
        with tracer.start_as_current_span(
            "chat qwen-max",
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "qwen-max"},
        ):
            pass
        with (
            tracer.start_as_current_span(
                "execute_tool lookup_knowledge",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup_knowledge",
                    "gen_ai.tool.call.id": "call-1",
                    "gen_ai.tool.call.arguments": json.dumps({"q": "order-service 5xx"}),
                    "gen_ai.tool.call.result": "1 chunk",
                },
            ),
            tracer.start_as_current_span(
                "retrieval runbooks",
                attributes={
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": "order-service 5xx",
                    "gen_ai.retrieval.documents": json.dumps(
                        [{"id": RUNBOOK_ID, "score": 0.95, "content": RUNBOOK}], ensure_ascii=False
                    ),
                },
            ),
        ):
            pass
        with (
            tracer.start_as_current_span(
                "execute_tool query_metrics",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "query_metrics",
                    "gen_ai.tool.call.id": "call-2",
                    "gen_ai.tool.call.arguments": "{}",
                },
                record_exception=False,
                set_status_on_exception=False,
            ) as span,
            _failing(span),
        ):
            raise TimeoutError("prometheus timeout")
