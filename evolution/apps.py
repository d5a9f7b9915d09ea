from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvolutionConfig(AppConfig):
    name = "evolution"
    verbose_name = _("Evolution verification")
