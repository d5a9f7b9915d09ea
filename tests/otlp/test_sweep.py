"""otlp_sweep: traces whose root never arrives are ingested as partial sessions or expired;
spans of ingested traces are purged after the retention period, and later spans refused."""

from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from otlp.config import ReceiverConfig
from otlp.models import BufferedSpan, BufferedTrace, TraceState
from otlp.services.sweep import SweepResult, otlp_sweep
from tests.otlp.conftest import export, rpc_status
from tests.otlp.sdk import QUERY, late_span, openinference_agent, protobuf_body

pytestmark = pytest.mark.django_db

CONFIG = ReceiverConfig.from_settings()


def later(**delta: float) -> timezone.datetime:
    return timezone.now() + timedelta(**delta)


def sweep(**after: float) -> SweepResult:
    return otlp_sweep(config=CONFIG, now=later(**after))


@pytest.fixture
def buffered_without_root(api, recorder):
    """An agent run whose root span never reached SelfEval (the process died before it ended)."""
    openinference_agent(recorder.tracer)
    spans = recorder.take()
    root = next(span for span in spans if span.parent is None)
    assert export(api, protobuf_body([s for s in spans if s is not root])).status_code == 200
    return root


def test_a_trace_within_its_timeout_is_left_buffering(buffered_without_root):
    assert sweep(minutes=29) == SweepResult()
    assert BufferedTrace.objects.get().state == TraceState.BUFFERING


def test_a_trace_past_its_timeout_becomes_a_partial_session(buffered_without_root):
    assert sweep(minutes=31) == SweepResult(ingested=1)

    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.root_span_id) == (TraceState.PARTIAL, "")
    session = trace.session
    assert (session.status, session.finished_at) == ("RUNNING", None)
    assert session.query == QUERY  # the first span with an input: the planning LLM call
    assert session.invocations.count() == 3
    assert sweep(minutes=31) == SweepResult()  # swept once


def test_the_root_arriving_after_the_sweep_completes_the_session(api, buffered_without_root):
    sweep(minutes=31)

    assert export(api, protobuf_body([buffered_without_root])).status_code == 200

    trace = BufferedTrace.objects.get()
    assert trace.state == TraceState.INGESTED and trace.ingest_count == 2
    assert DiagnosisSession.objects.get().status == "SUCCEEDED"


def test_late_spans_of_a_partial_trace_re_ingest_it(api, buffered_without_root, recorder):
    sweep(minutes=31)
    before = DiagnosisSession.objects.get().invocations.count()
    # A sibling of the others, under the root that never came.
    late_span(recorder.tracer, buffered_without_root, "query_logs", {"openinference.span.kind": "TOOL"})

    assert export(api, protobuf_body(recorder.take())).status_code == 200

    assert BufferedTrace.objects.get().state == TraceState.PARTIAL
    assert DiagnosisSession.objects.get().invocations.count() == before + 1


def test_a_trace_that_makes_no_session_expires_and_refuses_later_spans(api, recorder):
    with recorder.tracer.start_as_current_span("run"), recorder.tracer.start_as_current_span("step"):
        pass  # no input anywhere: no query
    children = [span for span in recorder.take() if span.parent is not None]
    export(api, protobuf_body(children))

    assert sweep(minutes=31) == SweepResult(expired=1)

    trace = BufferedTrace.objects.get()
    assert trace.state == TraceState.EXPIRED and "query:" in trace.error
    assert not BufferedSpan.objects.exists() and not DiagnosisSession.objects.exists()
    late = export(api, protobuf_body(children))  # the exporter retries
    assert late.status_code == 400 and "expired" in rpc_status(late).message  # nothing of it kept
    assert BufferedTrace.objects.get().rejected_spans == 1


def test_spans_of_ingested_traces_are_purged_after_the_retention(api, recorder):
    openinference_agent(recorder.tracer)
    spans = recorder.take()
    export(api, protobuf_body(spans))

    assert sweep(hours=23) == SweepResult()
    assert sweep(hours=25) == SweepResult(purged=1)

    trace = BufferedTrace.objects.get()
    assert trace.spans_purged_at is not None and not BufferedSpan.objects.filter(trace=trace).exists()
    assert DiagnosisSession.objects.get().invocations.count() == 3  # the session stays
    root = next(span for span in spans if span.parent is None)
    late_span(recorder.tracer, root, "late_tool", {"openinference.span.kind": "TOOL"})
    late = export(api, protobuf_body(recorder.take()))
    assert late.status_code == 400 and "purged" in rpc_status(late).message
    assert BufferedTrace.objects.get().rejected_spans == 1


def test_command_reports_and_validates_its_options(buffered_without_root):
    out = StringIO()
    with time_machine.travel(later(minutes=31), tick=True):
        call_command("otlp_sweep", "--timeout-minutes", "30", stdout=out)

    assert (
        out.getvalue().strip()
        == "ingested 1 trace(s) without their root span (partial sessions), expired 0, purged the spans of 0"
    )
    with pytest.raises(CommandError, match="--limit must be at least 1"):
        call_command("otlp_sweep", "--limit", "0")


def test_a_trace_whose_every_span_was_refused_expires(api, recorder):
    with recorder.tracer.start_as_current_span("run", attributes={"selfeval.mode": "batch"}):
        pass
    refused = export(api, protobuf_body(recorder.take()))
    assert refused.status_code == 400 and "mode:" in rpc_status(refused).message

    assert sweep(minutes=31) == SweepResult(expired=1)
    trace = BufferedTrace.objects.get()
    assert (trace.state, trace.span_count, trace.rejected_spans) == (TraceState.EXPIRED, 0, 1)
    assert "mode:" in trace.last_rejection  # why its span was refused, beside why the trace expired
