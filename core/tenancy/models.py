"""Projects (the tenants) and their API keys.

The tables keep the names they had when these models lived in the diagnosis app
(diagnosis_project, diagnosis_projectapikey); the move was a state-only migration.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _
from rest_framework_api_key.models import AbstractAPIKey, BaseAPIKeyManager


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True, verbose_name=_("slug"))
    name = models.CharField(max_length=200, verbose_name=_("name"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        db_table = "diagnosis_project"
        ordering = ["slug"]
        verbose_name = _("project")
        verbose_name_plural = _("projects")

    def __str__(self) -> str:
        return self.name or self.slug


class ProjectAPIKeyQuerySet(models.QuerySet):
    def update(self, **fields) -> int:
        # A bulk change (revoking, expiring) must reach the verification cache like a save does.
        from core.tenancy.services import api_key_cache_forget

        prefixes = list(self.values_list("prefix", flat=True))
        updated = super().update(**fields)
        api_key_cache_forget(prefixes=prefixes)
        return updated


class ProjectAPIKeyManager(BaseAPIKeyManager.from_queryset(ProjectAPIKeyQuerySet)):
    def get_usable_keys(self) -> models.QuerySet:
        # The project comes along: every authenticated request needs it.
        return super().get_usable_keys().select_related("project")


class ProjectAPIKey(AbstractAPIKey):
    """A machine client's key; only its hash is stored (djangorestframework-api-key)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")

    objects = ProjectAPIKeyManager()

    class Meta(AbstractAPIKey.Meta):
        db_table = "diagnosis_projectapikey"
        verbose_name = _("project API key")
        verbose_name_plural = _("project API keys")
