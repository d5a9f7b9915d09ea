from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReportingConfig(AppConfig):
    """The read models with their own rules: the day rollups, kept exact from the domain writes,
    and the dashboard and calibration figures read from them."""

    name = "reporting"
    verbose_name = _("Reporting")

    def ready(self) -> None:
        from reporting import receivers  # noqa: F401 (connects to diagnosis.signals)
