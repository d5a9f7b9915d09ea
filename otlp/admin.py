"""Buffered traces in the admin: what arrived over OTLP and what became of it, read-only.

A reviewer finds here the traces ingested without their root span (state PARTIAL: the session is
RUNNING and may miss its answer), those that expired and why, the spans still waiting, and the
traces some of whose spans were refused, with the reason (the dashboard counts them).
"""

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from core.adminkit.display import session_inspector_link
from core.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from core.adminkit.paging import CappedCountPaginator
from otlp.models import BufferedTrace, TraceState
from otlp.spans import SpanRecord

_STATE_BADGES = {
    TraceState.BUFFERING: "se-status-pending",
    TraceState.INGESTED: "se-status-succeeded",
    TraceState.PARTIAL: "se-badge-warn",
    TraceState.EXPIRED: "se-status-failed",
}
SPANS_SHOWN = 200
REFUSAL_CHARS = 120  # of the last refusal's reason, in the list


class RefusedSpansFilter(admin.SimpleListFilter):
    title = _("refused spans")
    parameter_name = "refused"

    def lookups(self, request, model_admin):
        return [("yes", _("Some spans refused")), ("no", _("No span refused"))]

    def queryset(self, request, queryset):
        if self.value() in {"yes", "no"}:
            return queryset.filter(last_rejected_at__isnull=self.value() == "no")
        return queryset


@admin.register(BufferedTrace)
class BufferedTraceAdmin(TenantAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "trace_id",
        "state_badge",
        "session_link",
        "span_count",
        "rejected_spans",
        "refusal",
        "last_span_at",
        "project",
    ]
    list_filter = ["state", RefusedSpansFilter, "project"]
    search_fields = ["=trace_id", "=ingested_as"]
    list_select_related = ["project", "session"]
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    fields = [
        "project",
        "trace_id",
        "state_badge",
        "session_link",
        "ingested_as",
        "root_span_id",
        "span_count",
        "stored_bytes",
        "rejected_spans",
        "last_rejection",
        "last_rejected_at",
        "error",
        "first_span_at",
        "last_span_at",
        "ingested_at",
        "ingest_count",
        "spans_purged_at",
        "spans_table",
    ]
    readonly_fields = ["state_badge", "session_link", "spans_table"]

    @admin.display(description=_("state"), ordering="state")
    def state_badge(self, trace: BufferedTrace) -> str:
        return format_html('<span class="se-badge {}">{}</span>', _STATE_BADGES[trace.state], trace.get_state_display())

    @admin.display(description=_("session"))
    def session_link(self, trace: BufferedTrace) -> str:
        return session_inspector_link(trace.session) if trace.session else (trace.ingested_as or "—")

    @admin.display(description=_("last refusal"), ordering="last_rejected_at")
    def refusal(self, trace: BufferedTrace) -> str:
        if not trace.last_rejection:
            return "—"
        return format_html(
            '<span title="{}">{}</span>', trace.last_rejection, Truncator(trace.last_rejection).chars(REFUSAL_CHARS)
        )

    @admin.display(description=_("buffered spans (in start order)"))
    def spans_table(self, trace: BufferedTrace) -> str:
        records = [
            SpanRecord.from_json(record) for record in trace.spans.values_list("record", flat=True)[:SPANS_SHOWN]
        ]
        if not records:
            return "—"
        rows = format_html_join(
            "",
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    record.span_id,
                    record.parent_span_id or "—",
                    record.name,
                    record.attributes.get("openinference.span.kind")
                    or record.attributes.get("gen_ai.operation.name")
                    or "",
                    f"{record.duration_ms} ms" + (" · error" if record.error else ""),
                )
                for record in records
            ),
        )
        more = trace.span_count - len(records)
        return format_html(
            "<table><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>"
            "<tbody>{}</tbody></table>{}",
            _("span"),
            _("parent"),
            _("name"),
            _("kind"),
            _("duration"),
            rows,
            format_html("<p>{}</p>", _("… and %(count)s more") % {"count": more}) if more > 0 else "",
        )
