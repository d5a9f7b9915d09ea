"""Admin of what only the diagnosis app knows: claim checks and reviews (read-only).

The session admin (inspector, triage queue) reads across apps and lives in the back office.
"""

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from core.adminkit.display import session_inspector_link
from core.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from core.adminkit.paging import CappedCountPaginator
from diagnosis.evaluation_layers import FactCheck, GatekeeperBinding, entries_read
from diagnosis.messages import machine_label, machine_text
from diagnosis.models import ClaimCheck, SessionReview

# Columns the lists never show; leaving them out keeps a page of sessions a few kilobytes.
HEAVY_SESSION_FIELDS = ("answer", "alert", "active_alerts", "executor_output", "self_evaluation", "evaluation_error")


@admin.register(SessionReview)
class SessionReviewAdmin(TenantAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["session", "judgement", "verifier_was_right", "verifier_verdict", "reviewer", "created_at"]
    list_filter = ["judgement", "verifier_was_right", "verifier_verdict"]
    list_select_related = ["session", "reviewer"]
    raw_id_fields = ["session"]
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator


class JudgeFilter(admin.SimpleListFilter):
    """The judges that decided claims, by their names in the admin's language."""

    title = _("judge")
    parameter_name = "judge"

    def lookups(self, request, model_admin):
        judges = model_admin.get_queryset(request).order_by("judge").values_list("judge", flat=True).distinct()
        return [(judge, machine_label(judge)) for judge in judges]

    def queryset(self, request, queryset):
        return queryset.filter(judge=self.value()) if self.value() else queryset


@admin.register(ClaimCheck)
class ClaimCheckAdmin(TenantAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Claims across sessions, e.g. every CONTRADICTED claim about one service."""

    list_display = [
        "claim_id",
        "session_link",
        "verdict",
        "critical",
        "service",
        "judge_display",
        "round",
        "created_at",
    ]
    list_filter = ["verdict", "critical", JudgeFilter]
    list_select_related = ["session"]
    search_fields = ["=service", "=claim_id"]
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    fields = [
        "session",
        "round",
        "claim_id",
        "text",
        "critical",
        "verdict",
        "judge_display",
        "rationale_display",
        "service",
        "facts_display",
        "bindings_display",
    ]
    readonly_fields = ["judge_display", "rationale_display", "facts_display", "bindings_display"]

    @admin.display(description=_("session"), ordering="session")
    def session_link(self, obj):
        return session_inspector_link(obj.session)

    @admin.display(description=_("judge"), ordering="judge")
    def judge_display(self, obj):
        return machine_label(obj.judge)

    @admin.display(description=_("rationale"))
    def rationale_display(self, obj):
        return machine_text(obj.rationale_code, obj.rationale_params, obj.rationale)

    @admin.display(description=_("facts checked"))
    def facts_display(self, obj):
        facts = entries_read(obj.facts, FactCheck) or []
        rows = ((f.text or f.value, machine_label(f.kind), machine_label(f.status)) for f in facts)
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{} ({} · {})</li>", rows)) if facts else "—"

    @admin.display(description=_("evidence bindings"))
    def bindings_display(self, obj):
        bindings = entries_read(obj.bindings, GatekeeperBinding) or []
        rows = (
            (machine_label(b.status), b.ref_id, machine_text(b.reason_code, b.reason_params, b.reason))
            for b in bindings
        )
        return (
            format_html("<ul>{}</ul>", format_html_join("", "<li>{} <code>{}</code> {}</li>", rows))
            if bindings
            else "—"
        )

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))
