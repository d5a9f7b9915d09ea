"""Pieces shared by the apps' admin classes."""

from core.tenancy.access import Access


class ReadOnlyAdminMixin:
    """For records that only the agent or a service writes: the admin shows them, nothing more."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class TenantAdminMixin:
    """A list of a tenant model shows the projects the user may see (`visible_to`), as the APIs do."""

    def get_queryset(self, request):
        return super().get_queryset(request).visible_to(self.access(request))

    def access(self, request) -> Access:
        # Admin users who may view this model see every project's rows.
        return Access.to_everything() if self.has_view_or_change_permission(request) else Access.to_nothing()
