"""Projects and their API keys. A key is shown once, when it is created; revoking cannot be undone."""

from django.contrib import admin, messages
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from core.tenancy.models import Project, ProjectAPIKey
from core.tenancy.services import api_key_revoke

# The library's own key model is not used: keys belong to projects here.
admin.site.unregister(APIKey)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(ProjectAPIKey)
class ProjectAPIKeyAdmin(APIKeyModelAdmin):
    list_display = ["prefix", "name", "project", "created", "expiry_date", "_has_expired", "revoked"]
    list_filter = ["project", "revoked"]
    list_select_related = ["project"]
    search_fields = ["=prefix", "name"]
    actions = ["revoke_keys"]

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        return (*fields, "project") if obj is not None else fields

    @admin.action(permissions=["change"], description=_("Revoke the selected keys"))
    def revoke_keys(self, request, queryset):
        revoked = 0
        for api_key in queryset.filter(revoked=False):
            api_key_revoke(api_key=api_key)
            self.log_change(request, api_key, gettext("Revoked"))
            revoked += 1
        self.message_user(
            request,
            ngettext("%(n)d key revoked.", "%(n)d keys revoked.", revoked) % {"n": revoked},
            messages.SUCCESS,
        )
