"""Every feedback submission, read-only: the history behind DiagnosisSession.feedback."""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from core.adminkit.display import session_inspector_link
from core.adminkit.mixins import ReadOnlyAdminMixin, TenantAdminMixin
from core.adminkit.paging import CappedCountPaginator
from diagnosis.admin import HEAVY_SESSION_FIELDS
from feedback.models import FeedbackEvent


@admin.register(FeedbackEvent)
class FeedbackEventAdmin(TenantAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["created_at", "session_display", "value", "comment", "client", "reviewer", "end_user_id"]
    list_filter = ["value", "client"]
    list_select_related = ["session"]
    search_fields = ["=session__session_id", "=end_user_id"]
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    list_per_page = 50
    fields = ["session", "value", "comment", "client", "reviewer", "user", "end_user_id", "api_key", "created_at"]

    @admin.display(description=_("session"), ordering="session__session_id")
    def session_display(self, obj):
        return session_inspector_link(obj.session)

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))
