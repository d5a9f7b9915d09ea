from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.utils.translation import gettext_lazy as _


class BackOfficeConfig(AppConfig):
    """What reads across the apps: the admin site and dashboard, the session inspector, the triage
    queue and the calibration panel. It imports the apps; no app imports it."""

    name = "backoffice"
    label = "backoffice"
    verbose_name = _("Back office")

    def ready(self) -> None:
        from backoffice import receivers  # noqa: F401 (connects to the apps' signals)


class SelfEvalAdminConfig(admin_apps.AdminConfig):
    """Django's admin with the back office's site as the default site (named in INSTALLED_APPS)."""

    default = False

    default_site = "backoffice.admin_site.SelfEvalAdminSite"

    def ready(self) -> None:
        super().ready()
        # Registers the OpenAPI description of the API-key authentication.
        from core.api import schema  # noqa: F401
