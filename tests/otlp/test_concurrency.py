"""Spans of one trace arriving at once on many connections (PostgreSQL, real threads): the trace's
row lock lets no span be lost, none be stored twice, and the session end up with every span."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from diagnosis.models import DiagnosisSession
from otlp.models import BufferedSpan, BufferedTrace, TraceState
from tests.otlp.conftest import answer, export
from tests.otlp.sdk import Recorder, protobuf_body

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 8
TOOLS = 24


def agent_run(recorder: Recorder, number: int = 0):
    with recorder.tracer.start_as_current_span(
        "diagnose", attributes={"input.value": f"why 5xx? ({number})", "selfeval.session_id": f"s-concurrent-{number}"}
    ):
        for n in range(TOOLS):
            with recorder.tracer.start_as_current_span(
                f"tool {n}", attributes={"openinference.span.kind": "TOOL", "tool.name": f"tool_{n}"}
            ):
                pass
    return recorder.take()


def at_once(api_key: str, bodies: list[bytes]) -> list:
    barrier = threading.Barrier(len(bodies))

    def send(body: bytes):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
        try:
            barrier.wait(timeout=30)
            return export(client, body)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(send, bodies))


def test_one_trace_split_over_concurrent_requests_loses_no_span(project, api_key):
    spans = agent_run(Recorder())  # the root ends last: it is in the last share
    shares = [spans[i::THREADS] for i in range(THREADS)]

    responses = at_once(api_key, [protobuf_body(share) for share in shares])

    assert [r.status_code for r in responses] == [200] * THREADS
    assert not any(answer(r).HasField("partial_success") for r in responses)
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.span_count) == (TraceState.INGESTED, TOOLS + 1)
    assert BufferedSpan.objects.count() == TOOLS + 1
    session = DiagnosisSession.objects.get()
    # Whichever request ingested last read every span stored before it.
    assert sorted(session.invocations.values_list("tool_name", flat=True)) == sorted(f"tool_{n}" for n in range(TOOLS))


def test_concurrent_retries_of_one_export_store_it_once(project, api_key):
    body = protobuf_body(agent_run(Recorder()))

    responses = at_once(api_key, [body] * THREADS)

    assert [r.status_code for r in responses] == [200] * THREADS
    assert BufferedSpan.objects.count() == TOOLS + 1
    assert BufferedTrace.objects.get().ingest_count == 1  # the others found every span stored
    assert DiagnosisSession.objects.get().invocations.count() == TOOLS


def test_concurrent_requests_with_overlapping_traces_do_not_deadlock(project, api_key):
    recorder = Recorder()
    runs = [agent_run(recorder, number) for number in range(4)]
    # Every request carries a part of every trace, in a different order each.
    bodies = [protobuf_body([span for run in runs[i:] + runs[:i] for span in run[i::4]]) for i in range(4)]

    responses = at_once(api_key, bodies * 2)

    assert [r.status_code for r in responses] == [200] * 8
    assert DiagnosisSession.objects.count() == 4
    assert all(session.invocations.count() == TOOLS for session in DiagnosisSession.objects.all())
