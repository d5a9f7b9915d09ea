"""POST /v1/traces through the test client: encodings, compression, auth, refusals, limits, buffering.

The live-server tests (test_live_exporter.py) send the same traces through the SDK's exporter.
"""

import gzip
import json
import zlib

import pytest
from django.core.cache import cache
from django.db import OperationalError
from django.test import override_settings
from google.rpc import code_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.trace import Status, StatusCode

from core.api.throttling import ClientScopedRateThrottle
from diagnosis.models import DiagnosisSession, EvidenceRef
from otlp.models import BufferedSpan, BufferedTrace, TraceState
from tests.otlp.conftest import JSON, PROTOBUF, URL, answer, export, rpc_status
from tests.otlp.sdk import (
    EXECUTOR_OUTPUT,
    QUERY,
    RUNBOOK,
    RUNBOOK_ID,
    Recorder,
    genai_agent,
    gzipped,
    late_span,
    openinference_agent,
    otlp_json,
    protobuf_body,
    request_of,
    trace_hex,
)

pytestmark = pytest.mark.django_db


def children_and_root(spans):
    root = next(span for span in spans if span.parent is None)
    return [span for span in spans if span is not root], [root]


def refused(response) -> str:
    """The message of a request none of whose spans was kept: a 400 with a google.rpc.Status, which
    the exporter logs (it never reads a partial success, and never retries a 400)."""
    assert response.status_code == 400, response.content
    status = rpc_status(response)
    assert status.code == code_pb2.INVALID_ARGUMENT
    assert status.message.startswith("No span of the request was kept: ")
    return status.message


# --- a trace becomes a session ------------------------------------------------------------------


def test_openinference_trace_becomes_an_evaluated_session(api, project, recorder, django_capture_on_commit_callbacks):
    openinference_agent(recorder.tracer, session_id="s-otel-0001")
    spans = recorder.take()

    with django_capture_on_commit_callbacks(execute=True):
        response = export(api, protobuf_body(spans))

    assert response.status_code == 200
    assert not answer(response).HasField("partial_success")  # everything accepted
    session = DiagnosisSession.objects.get(project=project, session_id="s-otel-0001")
    assert (session.mode, session.status, session.query) == ("chat", "SUCCEEDED", QUERY)
    assert session.executor_output == EXECUTOR_OUTPUT
    assert [(i.tool_name, i.status, i.match_level) for i in session.invocations.all()] == [
        ("lookup_knowledge", "SUCCESS", "L0"),
        ("search_logs", "SUCCESS", "L1"),
        ("query_metrics", "FAILED", ""),
    ]
    ref = EvidenceRef.objects.get(session=session, ref_id=RUNBOOK_ID)
    assert (ref.content, ref.source) == (RUNBOOK, "kb://runbooks/order-5xx.md")
    # Evaluated like any posted session: the claim cites the retrieved runbook chunk.
    session.refresh_from_db()
    assert session.evaluation_state == "DONE"
    assert session.verifier_verdict == "PASS"
    trace = BufferedTrace.objects.get(trace_id=trace_hex(spans))
    assert (trace.state, trace.session, trace.span_count, trace.ingest_count) == (TraceState.INGESTED, session, 6, 1)


def test_genai_trace_in_gzipped_json_becomes_a_session(api, project, recorder):
    genai_agent(recorder.tracer)
    spans = recorder.take()

    response = export(api, gzipped(otlp_json(request_of(spans))), content_type=JSON, HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 200
    assert response["Content-Type"] == JSON
    assert response.json() == {}
    session = DiagnosisSession.objects.get(project=project, session_id=trace_hex(spans))
    assert session.query == QUERY
    assert [(i.invocation_id, i.tool_name, i.error) for i in session.invocations.all()] == [
        ("call-1", "lookup_knowledge", ""),
        ("call-2", "query_metrics", "TimeoutError: prometheus timeout"),
    ]
    assert session.invocations.get(invocation_id="call-1").evidence_refs.get().ref_id == RUNBOOK_ID


def test_deflate_body_is_inflated(api, recorder):
    genai_agent(recorder.tracer)

    response = export(api, zlib.compress(protobuf_body(recorder.take())), HTTP_CONTENT_ENCODING="deflate")

    assert response.status_code == 200
    assert DiagnosisSession.objects.count() == 1


def test_content_type_parameters_and_the_registered_protobuf_type_are_accepted(api, recorder):
    genai_agent(recorder.tracer)
    body = protobuf_body(recorder.take())

    assert export(api, body, content_type="application/protobuf").status_code == 200
    assert (
        export(api, otlp_json(ExportTraceServiceRequest()), content_type="application/json; charset=utf-8").json() == {}
    )


def test_spans_wait_in_the_database_until_the_root_arrives(api, recorder):
    openinference_agent(recorder.tracer)
    children, root = children_and_root(recorder.take())

    first = export(api, protobuf_body(children[:2]))
    second = export(api, otlp_json(request_of(children[2:])), content_type=JSON)

    assert first.status_code == second.status_code == 200
    assert not DiagnosisSession.objects.exists()
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.span_count) == (TraceState.BUFFERING, 5)

    assert export(api, protobuf_body(root)).status_code == 200

    session = DiagnosisSession.objects.get()
    # The planning LLM call, and each call the agent made directly under its root as a step of its own.
    steps = list(session.steps.values_list("name", flat=True))
    assert steps == ["plan", "lookup_knowledge", "search_logs", "query_metrics"]
    assert [(i.tool_name, steps[i.step_index]) for i in session.invocations.all()] == [
        ("lookup_knowledge", "lookup_knowledge"),
        ("search_logs", "search_logs"),
        ("query_metrics", "query_metrics"),
    ]
    trace.refresh_from_db()
    assert (trace.state, trace.root_span_id, trace.ingested_as) == (
        TraceState.INGESTED,
        root[0].context.span_id.to_bytes(8).hex(),
        session.session_id,
    )


def test_late_span_re_ingests_the_session(api, recorder):
    openinference_agent(recorder.tracer)
    spans = recorder.take()
    late = next(span for span in spans if span.name == "query_metrics")
    assert export(api, protobuf_body([s for s in spans if s is not late])).status_code == 200
    session = DiagnosisSession.objects.get()
    assert session.invocations.count() == 2

    assert export(api, protobuf_body([late])).status_code == 200

    assert DiagnosisSession.objects.get().pk == session.pk
    assert session.invocations.count() == 3
    assert BufferedTrace.objects.get().ingest_count == 2


def test_a_retried_export_stores_nothing_twice(api, recorder):
    openinference_agent(recorder.tracer)
    body = protobuf_body(recorder.take())
    assert export(api, body).status_code == 200

    response = export(api, body)

    assert response.status_code == 200
    assert not answer(response).HasField("partial_success")
    assert BufferedSpan.objects.count() == 6
    trace = BufferedTrace.objects.get()
    assert (trace.span_count, trace.ingest_count) == (6, 1)  # nothing new: no re-ingestion


def test_same_trace_id_in_two_projects_is_two_traces(api, other_api, recorder):
    openinference_agent(recorder.tracer)
    body = protobuf_body(recorder.take())

    assert export(api, body).status_code == export(other_api, body).status_code == 200

    assert BufferedTrace.objects.count() == 2
    assert set(DiagnosisSession.objects.values_list("project__slug", flat=True)) == {"acme-chat", "acme-aiops"}


def test_empty_request_is_a_success(api):
    response = export(api, b"")

    assert response.status_code == 200
    assert answer(response) == type(answer(response))()
    assert not BufferedTrace.objects.exists()


def test_aiops_mode_and_alert_from_resource_and_root_attributes(api, project):
    recorder = Recorder(resource={"service.name": "aiops-agent", "selfeval.mode": "aiops"})
    alert = {"name": "HighErrorRate", "service": "order-service", "severity": "critical", "labels": {}}
    openinference_agent(recorder.tracer, root_attributes={"selfeval.alert": json.dumps(alert)})

    assert export(api, protobuf_body(recorder.take())).status_code == 200

    session = DiagnosisSession.objects.get()
    assert (session.mode, session.alert_name, session.alert_service) == ("aiops", "HighErrorRate", "order-service")


# --- what OTLP sends is kept: the root's failure, the documents' sources -------------------------


def ingested(api, project, recorder) -> DiagnosisSession:
    spans = recorder.take()
    response = export(api, protobuf_body(spans))
    assert response.status_code == 200 and not answer(response).HasField("partial_success"), response.content
    return DiagnosisSession.objects.get(project=project, session_id=trace_hex(spans))


def test_the_roots_status_message_is_the_failed_sessions_error(api, project, recorder):
    with recorder.tracer.start_as_current_span("diagnose", attributes={"input.value": QUERY}) as root:
        root.set_status(Status(StatusCode.ERROR, "context window exceeded"))

    session = ingested(api, project, recorder)

    assert (session.status, session.error) == ("FAILED", "context window exceeded")


def test_the_roots_exception_event_is_the_failed_sessions_error(api, project, recorder):
    # The exception recorded as an event alone (no ERROR status): the event fails the run and names why.
    with (
        pytest.raises(RuntimeError),
        recorder.tracer.start_as_current_span(
            "diagnose", attributes={"input.value": QUERY}, set_status_on_exception=False
        ),
    ):
        raise RuntimeError("LLM quota exhausted")

    session = ingested(api, project, recorder)

    assert (session.status, session.error) == ("FAILED", "RuntimeError: LLM quota exhausted")


def test_an_openinference_documents_url_or_name_is_its_refs_source(api, project, recorder):
    documents = {
        # url and name: the url; name alone: the name; neither: the metadata's source
        0: {"id": "doc-url", "url": "https://wiki.example/runbooks/order-5xx", "name": "order-5xx.md"},
        1: {"id": "doc-name", "name": "pool-sizing.md"},
        2: {"id": "doc-meta", "metadata": json.dumps({"source": "kb://faq.md"})},
    }
    attributes = {"openinference.span.kind": "RETRIEVER", "input.value": "order-service 5xx"}
    for n, document in documents.items():
        attributes[f"retrieval.documents.{n}.document.content"] = f"chunk {n}"
        attributes.update({f"retrieval.documents.{n}.document.{key}": value for key, value in document.items()})
    with (
        recorder.tracer.start_as_current_span("diagnose", attributes={"input.value": QUERY}),
        recorder.tracer.start_as_current_span("search_runbooks", attributes=attributes),
    ):
        pass

    session = ingested(api, project, recorder)

    refs = EvidenceRef.objects.filter(session=session).order_by("position")
    assert [(ref.ref_id, ref.source) for ref in refs] == [
        ("doc-url", "https://wiki.example/runbooks/order-5xx"),
        ("doc-name", "pool-sizing.md"),
        ("doc-meta", "kb://faq.md"),
    ]


# --- refusals: OTLP status codes and google.rpc.Status bodies -----------------------------------


def test_missing_or_wrong_key_is_401_with_a_status_body(anonymous, client_for, recorder):
    genai_agent(recorder.tracer)
    body = protobuf_body(recorder.take())

    for client in (anonymous, client_for("not-a-key.at-all")):
        response = export(client, body)
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Api-Key"
        assert rpc_status(response).code == code_pb2.UNAUTHENTICATED
    assert not BufferedTrace.objects.exists()


def test_a_user_without_a_project_key_cannot_export(staff_api, recorder):
    genai_agent(recorder.tracer)

    response = export(staff_api, protobuf_body(recorder.take()))  # authenticated, but for no project

    assert response.status_code == 403
    assert rpc_status(response).code == code_pb2.PERMISSION_DENIED


def test_json_error_bodies_are_the_json_form_of_status(anonymous):
    response = export(anonymous, b"{}", content_type=JSON)

    assert response.status_code == 401
    assert response["Content-Type"] == JSON
    assert response.json()["code"] == code_pb2.UNAUTHENTICATED
    assert "credentials" in response.json()["message"]


def test_other_content_types_are_415(api):
    response = export(api, b"resourceSpans", content_type="text/plain", HTTP_ACCEPT=PROTOBUF)

    assert response.status_code == 415
    assert "application/x-protobuf or application/json" in rpc_status(response).message


def test_unsupported_content_encoding_is_415_naming_the_accepted_ones(api):
    response = export(api, b"\x00", HTTP_CONTENT_ENCODING="br")

    assert response.status_code == 415
    assert response["Accept-Encoding"] == "gzip, deflate"


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "message"),
    [
        (b"\xff\xff\xff", PROTOBUF, "", "not a protobuf OTLP trace export"),
        (b"{not json", JSON, "", "not an OTLP/JSON trace export"),
        (b"[]", JSON, "", "must be a JSON object"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}', JSON, "", "is not a hex string"),
        (b'{"resourceSpans": "many"}', JSON, "", "not an OTLP/JSON"),
        (b"not gzip at all", PROTOBUF, "gzip", "does not inflate"),
        (gzip.compress(bytes(range(256)) * 40)[:-30], PROTOBUF, "gzip", "truncated"),
    ],
)
def test_undecodable_bodies_are_400(api, body, content_type, encoding, message):
    response = export(api, body, content_type=content_type, HTTP_CONTENT_ENCODING=encoding)

    assert response.status_code == 400, response.content
    status_message = response.json()["message"] if content_type == JSON else rpc_status(response).message
    assert message in status_message
    assert not BufferedTrace.objects.exists()


@override_settings(SELFEVAL_OTLP_MAX_BODY_BYTES=10_000)
def test_body_over_the_limit_is_413_before_or_after_inflating(api):
    too_long = export(api, b"\x00" * 10_001)
    bomb = gzip.compress(b"\x00" * 50_000_000)  # 50 MB of zeros in about 50 kB

    inflated_too_long = export(api, bomb, HTTP_CONTENT_ENCODING="gzip")

    assert too_long.status_code == inflated_too_long.status_code == 413
    assert "10000 bytes" in rpc_status(inflated_too_long).message
    assert len(bomb) < 100_000


def test_chunked_body_without_length_is_411(api):
    response = export(api, b"", HTTP_TRANSFER_ENCODING="chunked")

    assert response.status_code == 411


def test_get_is_405(api):
    response = api.get(URL, HTTP_ACCEPT=PROTOBUF)

    assert response.status_code == 405
    assert rpc_status(response).code == code_pb2.UNIMPLEMENTED


def test_throttled_export_is_429_with_retry_after(api, monkeypatch):
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "otlp", "2/min")
    monkeypatch.setattr(ClientScopedRateThrottle, "timer", lambda self: 600.0)  # a window's start
    cache.clear()

    statuses = [export(api, b"").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    response = export(api, b"")
    assert response["Retry-After"] == "60"
    assert rpc_status(response).code == code_pb2.RESOURCE_EXHAUSTED
    cache.clear()


def test_database_unavailable_is_503_with_retry_after(api, recorder, monkeypatch):
    def unavailable(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("otlp.api.otlp_spans_receive", unavailable)
    genai_agent(recorder.tracer)

    response = export(api, protobuf_body(recorder.take()))

    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    assert rpc_status(response).code == code_pb2.UNAVAILABLE


# --- partial success: spans refused one by one ---------------------------------------------------


def test_malformed_spans_are_refused_alone(api, recorder):
    genai_agent(recorder.tracer)
    message = request_of(recorder.take())
    spans = message.resource_spans[0].scope_spans[0].spans
    chat = next(span for span in spans if span.name.startswith("chat"))
    chat.span_id = b"\x00" * 8
    metrics = next(span for span in spans if span.name == "execute_tool query_metrics")
    metrics.end_time_unix_nano = metrics.start_time_unix_nano - 1

    response = export(api, message.SerializeToString())

    partial = answer(response).partial_success
    assert (response.status_code, partial.rejected_spans) == (200, 2)
    assert "span_id must be 8 bytes" in partial.error_message and "ends before it starts" in partial.error_message
    session = DiagnosisSession.objects.get()
    # The chat span is gone; the tool kept is a step of its own, as every tool under the root.
    assert list(session.steps.values_list("name", flat=True)) == ["execute_tool lookup_knowledge"]
    assert [(i.tool_name, i.step_index) for i in session.invocations.all()] == [("lookup_knowledge", 0)]
    # Counted on their trace with the reason, for the admin: the exporter never reads a partial success.
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.span_count, trace.rejected_spans) == (TraceState.INGESTED, 3, 2)
    assert trace.last_rejection.endswith("ends before it starts") and trace.last_rejected_at is not None


def test_a_request_whose_every_span_is_malformed_is_a_400_counted_on_the_trace(api, recorder):
    genai_agent(recorder.tracer)
    message = request_of(recorder.take())
    for span in message.resource_spans[0].scope_spans[0].spans:
        span.end_time_unix_nano = 0

    message_text = refused(export(api, message.SerializeToString()))

    assert "start_time_unix_nano and end_time_unix_nano are required (1 span)" in message_text
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.span_count, trace.rejected_spans) == (TraceState.BUFFERING, 0, 5)
    assert "end_time_unix_nano are required" in trace.last_rejection


@override_settings(SELFEVAL_OTLP_MAX_SPANS_PER_TRACE=4)
def test_spans_over_the_per_trace_limit_are_refused(api, recorder):
    openinference_agent(recorder.tracer)
    children, root = children_and_root(recorder.take())

    response = export(api, protobuf_body(children))  # 5 children: the 5th is one too many

    partial = answer(response).partial_success
    assert partial.rejected_spans == 1
    assert "SELFEVAL_OTLP_MAX_SPANS_PER_TRACE" in partial.error_message
    # The root alone is one span too many as well: nothing of that request is kept.
    assert "(SELFEVAL_OTLP_MAX_SPANS_PER_TRACE) (1 span)" in refused(export(api, protobuf_body(root)))
    trace = BufferedTrace.objects.get()
    assert (trace.span_count, trace.rejected_spans, trace.state) == (4, 2, TraceState.BUFFERING)


@override_settings(SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES=1000)
def test_span_with_an_attribute_over_the_limit_is_refused(api, recorder):
    with recorder.tracer.start_as_current_span("diagnose", attributes={"input.value": "q" * 2000}):
        pass

    with recorder.tracer.start_as_current_span("diagnose", attributes={"input.value": "question"}):
        pass
    too_big, fitting = recorder.take()

    message = refused(export(api, protobuf_body([too_big])))
    assert "attribute 'input.value'" in message and "SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES" in message
    assert not BufferedSpan.objects.exists()

    partial = answer(export(api, protobuf_body([too_big, fitting]))).partial_success
    assert partial.rejected_spans == 1 and "SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES" in partial.error_message
    assert DiagnosisSession.objects.get().query == "question"


@override_settings(SELFEVAL_OTLP_MAX_TRACE_BYTES=2000)
def test_spans_over_the_trace_size_limit_are_refused(api, recorder):
    with recorder.tracer.start_as_current_span("diagnose", attributes={"input.value": "question"}):
        for n in range(5):
            with recorder.tracer.start_as_current_span(f"step {n}", attributes={"output.value": "x" * 500}):
                pass
    children, _ = children_and_root(recorder.take())

    partial = answer(export(api, protobuf_body(children))).partial_success

    assert partial.rejected_spans == 2
    assert "SELFEVAL_OTLP_MAX_TRACE_BYTES" in partial.error_message
    assert BufferedTrace.objects.get().stored_bytes <= 2000


def test_a_root_that_makes_an_invalid_session_is_refused_with_the_session_apis_reason(api, recorder):
    tracer = recorder.tracer
    with (
        tracer.start_as_current_span("diagnose", attributes={"selfeval.mode": "batch"}),
        tracer.start_as_current_span("step"),
    ):
        pass
    children, root = children_and_root(recorder.take())
    assert export(api, protobuf_body(children)).status_code == 200

    response = export(api, otlp_json(request_of(root)), content_type=JSON)

    # Its only span refused: a 400 in the request's encoding, naming what the session API refused.
    assert response.status_code == 400
    message = response.json()["message"]
    assert message.startswith("No span of the request was kept: ") and "not a valid session" in message
    assert "mode:" in message and "query: no span has an input: set one of input.value" in message
    assert not DiagnosisSession.objects.exists()
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.span_count, trace.root_span_id) == (TraceState.BUFFERING, 1, "")
    assert "mode:" in trace.error


def test_a_late_span_that_breaks_the_session_leaves_the_ingested_one_intact(api, recorder):
    openinference_agent(recorder.tracer)
    spans = recorder.take()
    assert export(api, protobuf_body(spans)).status_code == 200
    session = DiagnosisSession.objects.get()
    root = next(span for span in spans if span.parent is None)
    # The session API refuses a tool call longer than a day (latencyMs).
    late_span(recorder.tracer, root, "slow_tool", {"openinference.span.kind": "TOOL"}, duration_ns=2 * 86_400 * 10**9)

    message = refused(export(api, protobuf_body(recorder.take())))

    assert "latencyMs" in message
    assert DiagnosisSession.objects.get().updated_at == session.updated_at
    assert BufferedSpan.objects.count() == 6
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.rejected_spans) == (TraceState.INGESTED, 1) and "latencyMs" in trace.error


# --- SQL statements ------------------------------------------------------------------------------


def test_statements_of_a_buffering_export_do_not_grow_with_its_spans(api, api_key, django_assert_num_queries):
    recorder = Recorder()
    with recorder.tracer.start_as_current_span("diagnose", attributes={"input.value": "q"}):
        for n in range(40):
            with recorder.tracer.start_as_current_span(f"step {n}"):
                pass
    children, root = children_and_root(recorder.take())
    export(api, protobuf_body(children[:1]))  # the key is verified and cached once

    # savepoint, INSERT traces ON CONFLICT, SELECT ... FOR UPDATE, SELECT stored span ids,
    # INSERT spans, UPDATE traces, release
    with django_assert_num_queries(7):
        assert export(api, protobuf_body(children[1:])).status_code == 200
    # ... plus reading the trace's spans and session_upsert's own six (savepoint, lock, INSERT
    # session, INSERT steps, the day's change mark, release), whatever the number of spans
    with django_assert_num_queries(14):
        assert export(api, protobuf_body(root)).status_code == 200
    assert DiagnosisSession.objects.get().steps.count() == 40


def test_statements_of_a_whole_trace_in_one_request(api, recorder, django_assert_num_queries):
    openinference_agent(recorder.tracer)
    body = protobuf_body(recorder.take())
    export(api, b"")  # the key is verified and cached once

    # savepoint, INSERT trace ON CONFLICT, SELECT ... FOR UPDATE, INSERT spans (a new trace has no
    # stored span to look up or read back), session_upsert's eight (savepoint, lock, INSERT session,
    # steps, invocations, evidence refs, the day's change mark, release), UPDATE trace, release
    with django_assert_num_queries(14):
        assert export(api, body).status_code == 200
    assert DiagnosisSession.objects.get().invocations.count() == 3
