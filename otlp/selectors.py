"""Reads of the span buffer."""

from collections.abc import Iterable

from otlp.models import BufferedSpan, BufferedTrace
from otlp.spans import SpanRecord


def buffered_span_records(*, traces: Iterable[BufferedTrace]) -> dict[int, list[SpanRecord]]:
    """Every stored span of these traces, by trace primary key (one query, none for no trace)."""
    traces = list(traces)
    records: dict[int, list[SpanRecord]] = {}
    if not traces:
        return records
    for trace_pk, record in BufferedSpan.objects.filter(trace__in=traces).values_list("trace_id", "record"):
        records.setdefault(trace_pk, []).append(SpanRecord.from_json(record))
    return records
