"""Every feedback submission, read-only: the history behind DiagnosisSession.feedback."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from diagnosis.admin import HEAVY_SESSION_FIELDS
from feedback.models import FeedbackEvent
from selfeval_site.admin_paging import CappedCountPaginator


@admin.register(FeedbackEvent)
class FeedbackEventAdmin(admin.ModelAdmin):
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
        url = reverse("admin:diagnosis_diagnosissession_change", args=[obj.session_id])
        return format_html('<a href="{}">{}</a>', url, obj.session.session_id)

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*(f"session__{name}" for name in HEAVY_SESSION_FIELDS))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
