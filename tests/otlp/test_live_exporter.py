"""The OpenTelemetry SDK's own OTLP/HTTP exporter against a live server, configured only by the
standard environment variables (OTEL_EXPORTER_OTLP_ENDPOINT / _HEADERS / _COMPRESSION); and the
OTLP/JSON encoding of the same spans posted over HTTP, as JSON exporters send them."""

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from diagnosis.models import DiagnosisSession
from otlp.models import BufferedTrace, TraceState
from tests.otlp.sdk import (
    QUERY,
    RUNBOOK_ID,
    Recorder,
    genai_agent,
    gzipped,
    openinference_agent,
    otlp_json,
    request_of,
    trace_hex,
)

pytestmark = pytest.mark.django_db(transaction=True)


class RecordingExporter(OTLPSpanExporter):
    """The SDK's exporter, keeping each export's result (the processor only logs failures)."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[SpanExportResult] = []

    def export(self, spans):
        result = super().export(spans)
        self.results.append(result)
        return result


@pytest.fixture
def otel_env(monkeypatch, live_server, api_key):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", live_server.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Api-Key {api_key}")
    return monkeypatch


def evaluated(session_id: str) -> DiagnosisSession:
    session = DiagnosisSession.objects.get(session_id=session_id)
    assert session.evaluation_state == "DONE", session.evaluation_error
    return session


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_sdk_exporter_in_several_batches_makes_one_evaluated_session(otel_env, compression):
    otel_env.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", compression)
    exporter = RecordingExporter()
    provider = TracerProvider()
    # Two spans per request: the trace arrives in three requests, the root (it ends last) in the last.
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=2, schedule_delay_millis=60_000))
    openinference_agent(provider.get_tracer("agent"), session_id=f"s-live-{compression}")

    assert provider.force_flush(timeout_millis=30_000)
    provider.shutdown()

    assert exporter.results == [SpanExportResult.SUCCESS] * 3
    session = evaluated(f"s-live-{compression}")
    assert session.query == QUERY
    assert session.verifier_verdict == "PASS"
    assert [i.tool_name for i in session.invocations.all()] == ["lookup_knowledge", "search_logs", "query_metrics"]
    assert BufferedTrace.objects.get().state == TraceState.INGESTED


def test_sdk_exporter_with_a_wrong_key_fails_without_retrying(otel_env):
    otel_env.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Api-Key wrong.key")
    exporter = RecordingExporter()
    recorder = Recorder()
    genai_agent(recorder.tracer)

    assert exporter.export(recorder.take()) == SpanExportResult.FAILURE

    assert not BufferedTrace.objects.exists()


@pytest.mark.parametrize("compressed", [False, True])
def test_otlp_json_over_http(live_server, api_key, compressed):
    recorder = Recorder()
    genai_agent(recorder.tracer)
    spans = recorder.take()
    body = otlp_json(request_of(spans))
    headers = {"Authorization": f"Api-Key {api_key}", "Content-Type": "application/json"}
    if compressed:
        body, headers["Content-Encoding"] = gzipped(body), "gzip"

    response = httpx.post(f"{live_server.url}/v1/traces", content=body, headers=headers, timeout=30)

    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {}
    session = evaluated(trace_hex(spans))
    assert session.invocations.get(invocation_id="call-1").evidence_refs.get().ref_id == RUNBOOK_ID
