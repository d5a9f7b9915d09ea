from rest_framework import permissions
from rest_framework.request import Request

from core.tenancy.models import ProjectAPIKey


class IsProjectClientOrStaff(permissions.BasePermission):
    """A project API key, or a logged-in staff user (admin session, CSRF-checked by DRF)."""

    message = "Authentication with a project API key or a staff session is required."

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, ProjectAPIKey):
            return True
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)


class IsProjectClient(permissions.BasePermission):
    """Commands that act for a project (ingestion, feedback tokens) need that project's key."""

    message = "This endpoint requires a project API key."

    def has_permission(self, request: Request, view: object) -> bool:
        return isinstance(request.auth, ProjectAPIKey)


class IsProjectClientOrStaffWithCaseView(IsProjectClientOrStaff):
    """Cases: a project API key, or staff who may view cases in the admin too."""

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, ProjectAPIKey):
            return True
        return super().has_permission(request, view) and request.user.has_perm("cases.view_case")
