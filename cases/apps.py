from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CasesConfig(AppConfig):
    name = "cases"
    # Not "Case library": that is the case list's own name, and the breadcrumb read "Case library › Case library".
    verbose_name = _("Cases")

    def ready(self) -> None:
        from cases import receivers  # noqa: F401 (connects to diagnosis.signals)
