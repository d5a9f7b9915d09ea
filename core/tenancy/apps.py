from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TenancyConfig(AppConfig):
    name = "core.tenancy"
    label = "tenancy"
    verbose_name = _("Projects and API keys")

    def ready(self) -> None:
        # Keeps the API-key verification cache coherent with every saved or deleted key.
        from core.tenancy import receivers  # noqa: F401
