"""The SelfEval admin site: the dashboard is the index; the calibration panel sits beside it."""

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from backoffice import pages
from core.tenancy.access import Access

# Strings new in Django 6 that its zh-hans catalogue does not translate yet (the blank choice of
# every select, the date hierarchy's label); listing them here puts them in our catalogue, which
# Django consults first.
gettext_noop("- Select an option -")
gettext_noop("Filter by %(field_name)s")
SESSION_VIEW_PERMISSION = "diagnosis.view_diagnosissession"
TRACE_VIEW_PERMISSION = "otlp.view_bufferedtrace"


class SelfEvalAdminSite(admin.AdminSite):
    site_header = _("SelfEval")
    site_title = _("SelfEval admin")
    index_title = _("Dashboard")
    index_template = "admin/selfeval/dashboard.html"
    # The top navigation and the dashboard's table list replace the sidebar, leaving lists the width.
    enable_nav_sidebar = False
    site_url = None  # "/" only redirects back here

    def get_urls(self):
        urls = [
            path("calibration/", self.admin_view(self.calibration_view), name="calibration"),
        ]
        return urls + super().get_urls()

    def index(self, request, extra_context=None):
        """The dashboard. Users without access to sessions get Django's plain app list."""
        if not request.user.has_perm(SESSION_VIEW_PERMISSION):
            return super().index(request, extra_context)
        date_range, range_context = pages.range_context(start=request.GET.get("start"), end=request.GET.get("end"))
        url = pages.session_list_url_for(self.name)
        context = {
            **self.each_context(request),
            "title": gettext("Dashboard"),
            "app_list": self.get_app_list(request),
            **range_context,
            **pages.dashboard_context(
                date_range=date_range,
                access=self.access(request),
                trace_access=Access.for_user(request.user, permission=TRACE_VIEW_PERMISSION),
                url=url,
                site_name=self.name,
            ),
            **(extra_context or {}),
        }
        request.current_app = self.name
        return TemplateResponse(request, self.index_template, context)

    def access(self, request) -> Access:
        """The projects whose figures the dashboard and the calibration panel add up."""
        return Access.for_user(request.user, permission=SESSION_VIEW_PERMISSION)

    def calibration_view(self, request):
        if not request.user.has_perm(SESSION_VIEW_PERMISSION):
            raise PermissionDenied
        date_range, range_context = pages.range_context(start=request.GET.get("start"), end=request.GET.get("end"))
        context = {
            **self.each_context(request),
            "title": gettext("Calibration: does the verifier agree with users and reviewers?"),
            **range_context,
            **pages.calibration_context(
                date_range=date_range, access=self.access(request), url=pages.session_list_url_for(self.name)
            ),
        }
        request.current_app = self.name
        return TemplateResponse(request, "admin/selfeval/calibration.html", context)


def login_lockout(request, response, credentials) -> HttpResponse:
    """django-axes' answer to a locked-out login (AXES_LOCKOUT_CALLABLE): a page in the admin's
    frame, with the site's name and language switch, status 429."""
    context = {
        **admin.site.each_context(request),
        "title": gettext("Login locked"),
        "failure_limit": settings.AXES_FAILURE_LIMIT,
    }
    # Rendered at once: the axes middleware replaces the login view's response with this one.
    return render(request, "admin/lockout.html", context, status=429)
