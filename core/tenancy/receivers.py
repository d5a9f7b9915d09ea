"""Cache coherence only (no business rule): a saved or deleted key or project drops its cached keys."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from core.tenancy.models import Project, ProjectAPIKey
from core.tenancy.services import api_key_cache_forget, api_key_cache_reset


@receiver(post_save, sender=ProjectAPIKey, dispatch_uid="tenancy.api_key_saved")
def _api_key_saved(sender, instance: ProjectAPIKey, created: bool, **kwargs) -> None:
    if created:  # nothing usable can be cached for a new key: only its prefix may be known as unknown
        api_key_cache_reset(prefix=instance.prefix)
    else:
        api_key_cache_forget(prefixes=[instance.prefix])


@receiver(post_delete, sender=ProjectAPIKey, dispatch_uid="tenancy.api_key_deleted")
def _api_key_deleted(sender, instance: ProjectAPIKey, **kwargs) -> None:
    api_key_cache_forget(prefixes=[instance.prefix])


@receiver(post_save, sender=Project, dispatch_uid="tenancy.project_changed")
def _project_changed(sender, instance: Project, created: bool, **kwargs) -> None:
    if not created:  # the cached keys carry the project's name and slug
        api_key_cache_forget(prefixes=ProjectAPIKey.objects.filter(project=instance).values_list("prefix", flat=True))
