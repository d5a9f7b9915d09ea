from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CasesConfig(AppConfig):
    name = "cases"
    verbose_name = _("Case library")

    def ready(self) -> None:
        from cases import receivers  # noqa: F401 (connects to diagnosis.signals)
