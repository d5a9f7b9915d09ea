"""Admin of what only the diagnosis app knows: claim checks and reviews (read-only).

The session admin (inspector, triage queue) reads across apps and lives in the back office.
"""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from diagnosis.models import ClaimCheck, SessionReview
from selfeval_site.adminkit.display import session_inspector_link
from selfeval_site.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from selfeval_site.adminkit.paging import CappedCountPaginator

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


@admin.register(ClaimCheck)
class ClaimCheckAdmin(TenantAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Claims across sessions, e.g. every CONTRADICTED claim about one service."""

    list_display = ["claim_id", "session_link", "verdict", "critical", "service", "judge", "round", "created_at"]
    list_filter = ["verdict", "critical", "judge"]
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
        "judge",
        "rationale",
        "service",
        "facts",
        "bindings",
    ]

    @admin.display(description=_("session"), ordering="session")
    def session_link(self, obj):
        return session_inspector_link(obj.session)

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))
