"""Receiving OTLP spans: buffer them per trace in the database; ingest a trace once its root arrived.

One export request is one transaction. Its traces' rows are created if missing (INSERT ... ON
CONFLICT DO NOTHING) and locked in trace-id order, so concurrent requests for one trace, on any
worker or host, run one after the other and each sees the spans the other stored: no span is
lost, none stored twice (unique per trace), and an ingestion always reads every span received so
far. Sessions are then written in sessionId order (no deadlock between two requests).

A span is refused alone (counted in the answer's partial success, never stored) when it is
malformed, breaks a limit, belongs to an expired or purged trace, or when the trace it completes
does not make a valid session; the other spans of the request are kept. Every refusal is also
counted on the trace the span names, with its reason (`BufferedTrace.last_rejection`): exporters
never read a partial success, the admin shows it.
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from core.tenancy.models import Project
from otlp.config import ReceiverConfig
from otlp.models import BufferedSpan, BufferedTrace, TraceState
from otlp.selectors import buffered_span_records
from otlp.services.mapping import MatchThresholds
from otlp.services.traces import (
    TRACE_UPDATE_FIELDS,
    Mapped,
    buffered_trace_ingest,
    buffered_trace_map,
)
from otlp.spans import IncomingSpan, SpanRefused, spans_from_request

_MAX_MESSAGES = 5


@dataclass
class ReceiveResult:
    accepted_spans: int = 0
    rejected_spans: int = 0
    reasons: Counter[str] = field(default_factory=Counter)  # why spans were refused -> how many
    sessions: list[str] = field(default_factory=list)  # sessionIds ingested by this request

    def reject(self, count: int, reason: str) -> None:
        self.rejected_spans += count
        self.reasons[reason] += count

    @property
    def error_message(self) -> str:
        """The partial-success message: the most frequent reasons, each with its span count."""
        common = self.reasons.most_common(_MAX_MESSAGES)
        text = "; ".join(f"{reason} ({count} span{'s' if count > 1 else ''})" for reason, count in common)
        if len(self.reasons) > _MAX_MESSAGES:
            text += f"; and {len(self.reasons) - _MAX_MESSAGES} more reasons"
        return text


def otlp_spans_receive(
    *, project: Project, message: ExportTraceServiceRequest, config: ReceiverConfig
) -> ReceiveResult:
    """Store the request's spans for `project` and ingest every trace they complete or extend."""
    result = ReceiveResult()
    batch: dict[str, dict[str, IncomingSpan]] = {}
    malformed: dict[str, list[str]] = {}  # trace id -> why each of its malformed spans was refused
    for item in spans_from_request(message, max_attribute_bytes=config.max_attribute_bytes):
        if isinstance(item, SpanRefused):
            result.reject(1, str(item))
            if item.trace_id:
                malformed.setdefault(item.trace_id, []).append(str(item))
        elif item.record.span_id in batch.setdefault(item.trace_id, {}):
            result.accepted_spans += 1  # the same span twice in one request: kept once
        else:
            batch[item.trace_id][item.record.span_id] = item
    if not batch and not malformed:
        return result

    with transaction.atomic():
        now = timezone.now()
        traces = _traces_locked(project, sorted(batch.keys() | malformed.keys()), now)
        # A trace that has no span yet (in practice: a whole trace in one request) needs neither
        # the look-up of stored spans nor, to ingest, reading them back.
        new = {trace_id for trace_id, trace in traces.items() if trace.span_count == 0}
        stored = _stored_span_ids({t: spans for t, spans in batch.items() if t not in new}, traces)
        rejected_before = {trace_id: trace.rejected_spans for trace_id, trace in traces.items()}
        for trace_id, reasons in malformed.items():
            _count_refused(traces[trace_id], len(reasons), reasons[-1], now)
        added: dict[str, list[IncomingSpan]] = {}
        for trace_id, spans in batch.items():
            trace = traces[trace_id]
            fresh = [span for span_id, span in spans.items() if (trace.pk, span_id) not in stored]
            result.accepted_spans += len(spans) - len(fresh)  # an exporter's retry: stored already
            added[trace_id] = _admit(trace, fresh, config, result, now)
            if added[trace_id]:
                trace.last_span_at = now
        _insert(added, traces)
        due = [traces[t] for t, spans in added.items() if spans and _may_complete(traces[t], spans)]
        _ingest(due, added, new, config, result, now)
        result.accepted_spans += sum(len(spans) for spans in added.values())
        # One UPDATE per changed trace (a retry changes none): an export usually carries one or a
        # few traces, and bulk_update's CASE per row and field costs more to build than these cost.
        for trace_id, trace in traces.items():
            if added.get(trace_id) or trace.rejected_spans != rejected_before[trace_id]:
                trace.save(update_fields=TRACE_UPDATE_FIELDS)
    return result


def _traces_locked(project: Project, trace_ids: list[str], now) -> dict[str, BufferedTrace]:
    BufferedTrace.objects.bulk_create(
        [BufferedTrace(project=project, trace_id=trace_id, last_span_at=now) for trace_id in trace_ids],
        ignore_conflicts=True,
    )
    traces = {}
    for trace in (
        BufferedTrace.objects.select_for_update().filter(project=project, trace_id__in=trace_ids).order_by("trace_id")
    ):
        trace.project = project
        traces[trace.trace_id] = trace
    return traces


def _stored_span_ids(batch: dict[str, dict[str, IncomingSpan]], traces: dict[str, BufferedTrace]) -> set:
    """(trace pk, span id) of the incoming spans these traces hold already: an exporter's retries."""
    if not batch:
        return set()
    return set(
        BufferedSpan.objects.filter(
            trace__in=[traces[trace_id] for trace_id in batch],
            span_id__in=[span_id for spans in batch.values() for span_id in spans],
        ).values_list("trace_id", "span_id")
    )


def _insert(added: dict[str, list[IncomingSpan]], traces: dict[str, BufferedTrace]) -> None:
    BufferedSpan.objects.bulk_create(
        BufferedSpan(
            trace=traces[trace_id],
            span_id=span.record.span_id,
            parent_span_id=span.record.parent_span_id,
            start_ns=span.record.start_ns,
            size=span.size,
            record=span.record.to_json(),
        )
        for trace_id, spans in added.items()
        for span in spans
    )


def _count_refused(trace: BufferedTrace, count: int, reason: str, now: datetime) -> None:
    """Count `count` refused spans on the trace, with why the last one was refused."""
    trace.rejected_spans += count
    trace.last_rejection = reason
    trace.last_rejected_at = now


def _admit(
    trace: BufferedTrace, spans: list[IncomingSpan], config: ReceiverConfig, result: ReceiveResult, now: datetime
) -> list[IncomingSpan]:
    """The spans the trace may still take; the others are refused with the limit they break."""
    if not spans:
        return []
    if trace.state == TraceState.EXPIRED or trace.spans_purged_at is not None:
        reason = (
            "expired: its root span never arrived" if trace.state == TraceState.EXPIRED else "its spans were purged"
        )
        reason = f"trace {trace.trace_id} is closed ({reason}); late spans are not kept"
        result.reject(len(spans), reason)
        _count_refused(trace, len(spans), reason, now)
        return []
    admitted = []
    for span in spans:
        if trace.span_count >= config.max_spans_per_trace:
            reason = f"trace has {config.max_spans_per_trace} spans already (SELFEVAL_OTLP_MAX_SPANS_PER_TRACE)"
        elif trace.stored_bytes + span.size > config.max_trace_bytes:
            reason = f"trace would exceed {config.max_trace_bytes} bytes (SELFEVAL_OTLP_MAX_TRACE_BYTES)"
        else:
            trace.span_count += 1
            trace.stored_bytes += span.size
            admitted.append(span)
            continue
        result.reject(1, f"trace {trace.trace_id}: {reason}")
        _count_refused(trace, 1, reason, now)
    return admitted


def _may_complete(trace: BufferedTrace, spans: list[IncomingSpan]) -> bool:
    """New spans change the session when the trace has (or may now have) its root, or was ingested
    without one: then they are late spans and re-ingest it."""
    return (
        bool(trace.root_span_id)
        or trace.state == TraceState.PARTIAL
        or any(span.record.is_root_candidate for span in spans)
    )


def _ingest(
    traces: list[BufferedTrace],
    added: dict[str, list[IncomingSpan]],
    new: set[str],
    config: ReceiverConfig,
    result: ReceiveResult,
    now: datetime,
) -> None:
    if not traces:
        return
    thresholds = MatchThresholds(l0=config.l0_score, l1=config.l1_score)
    records = buffered_span_records(traces=[trace for trace in traces if trace.trace_id not in new])
    for trace in traces:
        if trace.trace_id in new:
            records[trace.pk] = [span.record for span in added[trace.trace_id]]
    mapped: list[tuple[BufferedTrace, Mapped]] = []
    for trace in traces:
        outcome = buffered_trace_map(trace=trace, records=records[trace.pk], thresholds=thresholds)
        if not outcome.mapped.root_span_id and trace.state != TraceState.PARTIAL:
            continue  # a root candidate whose parent is here after all: the root is still to come
        if outcome.data is None:
            _refuse(trace, added[trace.trace_id], outcome.error, result, now)
        else:
            mapped.append((trace, outcome))
    for trace, outcome in sorted(mapped, key=lambda pair: pair[1].session_id):
        buffered_trace_ingest(trace=trace, mapped=outcome)
        result.sessions.append(trace.ingested_as)


def _refuse(trace: BufferedTrace, spans: list[IncomingSpan], error: str, result: ReceiveResult, now: datetime) -> None:
    """The spans just added make the trace an invalid session: take them back and refuse them,
    leaving the trace (and any session ingested from it before) as it was."""
    BufferedSpan.objects.filter(trace=trace, span_id__in=[span.record.span_id for span in spans]).delete()
    trace.span_count -= len(spans)
    trace.stored_bytes -= sum(span.size for span in spans)
    _count_refused(trace, len(spans), error, now)
    trace.error = error
    result.reject(len(spans), f"trace {trace.trace_id}: {error}")
    spans.clear()
