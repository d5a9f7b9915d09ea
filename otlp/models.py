"""Spans waiting for their trace to become a session, and what became of each trace.

Spans of one trace arrive in several export requests, at any gunicorn worker on any host, so they
wait here, not in a process: one `BufferedTrace` row per (project, trace id), locked by every
request that adds to it, and one `BufferedSpan` per span (unique per trace, so an exporter's retry
stores nothing twice). The trace becomes a session through the session API's own ingestion once
its root span arrives; later spans re-ingest it. `otlp_sweep` ingests or expires traces whose root
never arrives and purges the spans of ingested traces after the retention period.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from core.tenancy.access import TenantQuerySet
from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession


class TraceState(models.TextChoices):
    BUFFERING = "BUFFERING", _("Buffering")  # the root span has not arrived yet
    INGESTED = "INGESTED", _("Ingested")
    PARTIAL = "PARTIAL", _("Partial: no root span")  # ingested by the sweep, the session RUNNING
    EXPIRED = "EXPIRED", _("Expired")  # no root span, and no valid session without it


class BufferedTrace(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.DB_CASCADE, related_name="buffered_traces", verbose_name=_("project")
    )
    trace_id = models.CharField(_("trace id"), max_length=32, help_text=_("32 hex digits"))
    state = models.CharField(_("state"), max_length=16, choices=TraceState.choices, default=TraceState.BUFFERING)
    ingested_as = models.CharField(_("ingested as sessionId"), max_length=128, blank=True)
    session = models.ForeignKey(
        DiagnosisSession,
        on_delete=models.DB_SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("session"),
    )
    root_span_id = models.CharField(_("root span id"), max_length=16, blank=True)
    span_count = models.PositiveIntegerField(_("spans"), default=0)
    stored_bytes = models.PositiveBigIntegerField(_("stored bytes"), default=0)
    rejected_spans = models.PositiveIntegerField(_("rejected spans"), default=0)
    # Why the last refused span of this trace was refused, kept whatever became of the trace: a
    # partly refused request is visible here, not only in an answer the exporter never reads.
    last_rejection = models.TextField(_("last refusal"), blank=True)
    last_rejected_at = models.DateTimeField(_("last span refused at"), null=True, blank=True)
    error = models.TextField(_("last error"), blank=True)
    first_span_at = models.DateTimeField(_("first span received"), auto_now_add=True)
    last_span_at = models.DateTimeField(_("last span received"))
    ingested_at = models.DateTimeField(_("ingested at"), null=True, blank=True)
    ingest_count = models.PositiveIntegerField(_("ingestions"), default=0)
    spans_purged_at = models.DateTimeField(_("spans purged at"), null=True, blank=True)

    objects = TenantQuerySet.as_manager()

    class Meta:
        ordering = ["-last_span_at", "-id"]
        verbose_name = _("buffered trace")
        verbose_name_plural = _("buffered traces")
        constraints = [
            models.UniqueConstraint(fields=["project", "trace_id"], name="otlp_trace_unique_per_project"),
            models.CheckConstraint(condition=Q(state__in=TraceState.values), name="otlp_trace_state_valid"),
        ]
        indexes = [
            # The sweep: traces of one state whose last span is older than a cut-off.
            models.Index(fields=["state", "last_span_at"], name="otlp_trace_state_last"),
            models.Index(fields=["project", "-last_span_at"], name="otlp_trace_project_last"),
            models.Index(fields=["ingested_as"], name="otlp_trace_ingested_as"),
            # The admin's "refused spans" filter and the dashboard's count of a date range.
            models.Index(
                fields=["-last_rejected_at"],
                condition=Q(last_rejected_at__isnull=False),
                name="otlp_trace_refused",
            ),
        ]

    def __str__(self) -> str:
        return self.trace_id


class BufferedSpan(models.Model):
    trace = models.ForeignKey(BufferedTrace, on_delete=models.DB_CASCADE, related_name="spans")
    span_id = models.CharField(max_length=16)
    parent_span_id = models.CharField(max_length=16, blank=True)
    start_ns = models.BigIntegerField(help_text=_("start time, nanoseconds since the epoch"))
    size = models.PositiveIntegerField(help_text=_("encoded size of the span in bytes"))
    # otlp.spans.SpanRecord, its only reader and writer.
    record = models.JSONField()

    class Meta:
        ordering = ["trace", "start_ns", "span_id"]
        constraints = [models.UniqueConstraint(fields=["trace", "span_id"], name="otlp_span_unique_per_trace")]

    def __str__(self) -> str:
        return self.span_id
