from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BackOfficeConfig(AppConfig):
    """What reads across the apps: the admin site and dashboard, the session inspector, the triage
    queue, the calibration panel and the trace API. It imports the apps; no app imports it."""

    name = "selfeval_site.backoffice"
    label = "backoffice"
    verbose_name = _("Back office")
