"""Reads of the span buffer."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Sum
from django.db.models.functions import Coalesce

from core.tenancy.access import Access
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


@dataclass(frozen=True, slots=True)
class Refusals:
    """Traces whose last refused span came within a date range, and the spans they refused in all."""

    traces: int
    spans: int


def refusals_count(*, access: Access, since: datetime, before: datetime) -> Refusals:
    """The refusals of the traces `access` sees last refused in [since, before): one query, on the
    partial index of refused traces."""
    totals = (
        BufferedTrace.objects.visible_to(access)
        .filter(last_rejected_at__gte=since, last_rejected_at__lt=before)
        .aggregate(traces=Count("pk"), spans=Coalesce(Sum("rejected_spans"), 0))
    )
    return Refusals(traces=totals["traces"], spans=totals["spans"])
