from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DemoConfig(AppConfig):
    """Demo data tooling (generator, bulk COPY loader, enrichment, demo accounts) and its commands.

    Production code never imports it; only `seed_demo`, `create_demo_users`, tests and benchmarks do.
    """

    name = "demo"
    label = "demo"
    verbose_name = _("Demo data")
