from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    """The API's own data: the idempotency records every retry-safe endpoint shares."""

    name = "core.api"
    label = "api"
    verbose_name = _("API")
