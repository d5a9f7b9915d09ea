"""Projects and their API keys: creation, revocation, and verification of a presented key.

Verification reads the key's row from the shared cache (Django's default cache: Redis in
production), not from the database, on every request after the first. The cache holds what the
database holds (the key's hash, never the key) and stays coherent with it: every save, delete or
queryset update of a key replaces its entry with a tombstone, at once and again after commit, so a
revoked key fails on the next request on every server, and a request that read the row just
before the revocation cannot put it back (entries are only ever `add`ed). A tombstone lasts
`TOMBSTONE_SECONDS`; meanwhile that prefix is read from the database.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction

from core.tenancy.models import Project, ProjectAPIKey

CACHE_SECONDS = 300
TOMBSTONE_SECONDS = 60
_CACHE_KEY = "selfeval:api-key:{}"
_TOMBSTONE = "gone"
_UNKNOWN = "unknown"  # no usable key has this prefix; cached too, so a spray of bad keys stays cheap


class InvalidAPIKey(Exception):
    """The presented key is unknown, wrong, revoked or expired (one answer for all, on purpose)."""


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


def api_key_revoke(*, api_key: ProjectAPIKey) -> ProjectAPIKey:
    """Revoke the key for good; the next request with it fails on every server."""
    ProjectAPIKey.objects.filter(pk=api_key.pk).update(revoked=True)
    api_key.revoked = True
    return api_key


def api_key_verify(*, key: str) -> ProjectAPIKey:
    """The usable key `key` is, with its project loaded; raises InvalidAPIKey otherwise.

    The returned instance is built from the cached row: read it, do not save it.
    """
    prefix, dot, secret = key.partition(".")
    if not (prefix and dot and secret):
        raise InvalidAPIKey
    cache_key = _CACHE_KEY.format(prefix)
    entry = cache.get(cache_key)
    if entry is None or entry == _TOMBSTONE:
        row = ProjectAPIKey.objects.get_usable_keys().filter(prefix=prefix).first()
        fresh = _entry(row) if row is not None else _UNKNOWN
        if entry is None:
            cache.add(cache_key, fresh, CACHE_SECONDS)
        entry = fresh
    if entry == _UNKNOWN:
        raise InvalidAPIKey
    api_key = _instance(entry)
    if not ProjectAPIKey.objects.key_generator.verify(key, api_key.hashed_key) or api_key.has_expired:
        raise InvalidAPIKey
    return api_key


def api_key_cache_forget(*, prefixes: Iterable[str]) -> None:
    """Tombstone the cached rows of these key prefixes now and once the transaction commits."""
    tombstones = {_CACHE_KEY.format(prefix): _TOMBSTONE for prefix in prefixes}
    if not tombstones:
        return
    cache.set_many(tombstones, TOMBSTONE_SECONDS)
    transaction.on_commit(lambda: cache.set_many(tombstones, TOMBSTONE_SECONDS))


def api_key_cache_reset(*, prefix: str) -> None:
    """Drop what is cached for a prefix that has just been given to a new key."""
    cache.delete(_CACHE_KEY.format(prefix))


# The cached entry: plain values of the key's and its project's columns, in field order.
_KEY_FIELDS = [field.attname for field in ProjectAPIKey._meta.concrete_fields]
_PROJECT_FIELDS = [field.attname for field in Project._meta.concrete_fields]


def _entry(row: ProjectAPIKey) -> tuple[tuple, tuple]:
    return (
        tuple(getattr(row, name) for name in _KEY_FIELDS),
        tuple(getattr(row.project, name) for name in _PROJECT_FIELDS),
    )


def _instance(entry: tuple[tuple, tuple]) -> ProjectAPIKey:
    key_values, project_values = entry
    api_key = ProjectAPIKey.from_db("default", _KEY_FIELDS, key_values)
    ProjectAPIKey.project.field.set_cached_value(api_key, Project.from_db("default", _PROJECT_FIELDS, project_values))
    return api_key
