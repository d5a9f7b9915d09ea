from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OtlpAppConfig(AppConfig):
    """OpenTelemetry ingestion (POST /v1/traces): above diagnosis, which it feeds and never hears from."""

    name = "otlp"
    label = "otlp"
    verbose_name = _("OpenTelemetry ingestion")
