"""Pieces shared by the apps' admin classes."""

from django.urls import reverse
from django.utils.html import format_html


class ReadOnlyAdminMixin:
    """For records that only the agent or a service writes: the admin shows them, nothing more."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def session_inspector_link(session) -> str:
    """A link to the session inspector, labelled with the session's external id (escaped)."""
    url = reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])
    return format_html('<a href="{}">{}</a>', url, session.session_id)
