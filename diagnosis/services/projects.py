from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction

from diagnosis.models import Project, ProjectAPIKey


@dataclass(frozen=True)
class CreatedAPIKey:
    api_key: ProjectAPIKey
    key: str
    project_created: bool


def project_api_key_create(*, project_slug: str, key_name: str, project_name: str = "") -> CreatedAPIKey:
    """Create an API key for the project, creating the project first if it does not exist.

    The plain key is returned once; only its hash is stored.
    """
    try:
        validate_slug(project_slug)
    except ValidationError as exc:
        raise ValueError(f"invalid project slug {project_slug!r}: {exc.messages[0]}") from None
    with transaction.atomic():
        project, project_created = Project.objects.get_or_create(
            slug=project_slug, defaults={"name": project_name or project_slug}
        )
        api_key, key = ProjectAPIKey.objects.create_key(name=key_name, project=project)
    return CreatedAPIKey(api_key=api_key, key=key, project_created=project_created)
