"""The receiver's periodic safety net (`manage.py otlp_sweep`, every minute).

- A trace still BUFFERING `trace_timeout` after its last span (its root span never came: the agent
  crashed, or the exporter lost it) is ingested as it is: a partial session, RUNNING, marked
  PARTIAL on the trace; when its spans do not make a valid session it is EXPIRED instead (the
  reason kept on the trace) and its spans deleted.
- The spans of an ingested trace are kept `span_retention` after its last span, so that late spans
  re-ingest the whole session; then they are purged, and later spans of that trace are refused.

Each trace is handled in a transaction of its own under its row lock, skipping rows a receiver
holds (it is busy with that trace): safe beside the receivers and another sweep.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from otlp.config import ReceiverConfig
from otlp.models import BufferedSpan, BufferedTrace, TraceState
from otlp.selectors import buffered_span_records
from otlp.services.mapping import MatchThresholds
from otlp.services.traces import (
    TRACE_UPDATE_FIELDS,
    buffered_trace_ingest,
    buffered_trace_map,
)


@dataclass(frozen=True)
class SweepResult:
    ingested: int = 0  # without their root span: partial sessions
    expired: int = 0
    purged: int = 0


def otlp_sweep(*, config: ReceiverConfig, limit: int = 1000, now: datetime | None = None) -> SweepResult:
    """Ingest or expire traces whose root never arrived, purge old spans (at most `limit` of each)."""
    now = now or timezone.now()
    thresholds = MatchThresholds(l0=config.l0_score, l1=config.l1_score)
    stale = _trace_pks(TraceState.BUFFERING, before=now - config.trace_timeout, limit=limit)
    ingested = expired = 0
    for pk in stale:
        with transaction.atomic():
            trace = (
                BufferedTrace.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("project")
                .filter(pk=pk, state=TraceState.BUFFERING, last_span_at__lt=now - config.trace_timeout)
                .first()
            )
            if trace is None:  # a receiver holds it or just extended it
                continue
            mapped = buffered_trace_map(
                trace=trace, records=buffered_span_records(traces=[trace]).get(trace.pk, []), thresholds=thresholds
            )
            if mapped.data is None:
                trace.state = TraceState.EXPIRED
                trace.error = mapped.error
                _purge(trace, now)
                expired += 1
            else:
                buffered_trace_ingest(trace=trace, mapped=mapped)
                ingested += 1
            trace.save(update_fields=TRACE_UPDATE_FIELDS)

    purged = 0
    for state in (TraceState.INGESTED, TraceState.PARTIAL):
        for pk in _trace_pks(state, before=now - config.span_retention, limit=limit):
            with transaction.atomic():
                trace = (
                    BufferedTrace.objects.select_for_update(skip_locked=True)
                    .filter(pk=pk, spans_purged_at__isnull=True, last_span_at__lt=now - config.span_retention)
                    .first()
                )
                if trace is not None:
                    _purge(trace, now)
                    trace.save(update_fields=["spans_purged_at"])
                    purged += 1
    return SweepResult(ingested=ingested, expired=expired, purged=purged)


def _trace_pks(state: str, *, before: datetime, limit: int) -> list[int]:
    return list(
        BufferedTrace.objects.filter(state=state, last_span_at__lt=before, spans_purged_at__isnull=True)
        .order_by("last_span_at")
        .values_list("pk", flat=True)[:limit]
    )


def _purge(trace: BufferedTrace, now: datetime) -> None:
    BufferedSpan.objects.filter(trace=trace).delete()
    trace.spans_purged_at = now
