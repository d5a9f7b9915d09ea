"""Who is calling: a machine client with a project API key, or a staff user with a session."""

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser
from django.db import connection
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from diagnosis.models import Project, ProjectAPIKey
from selfeval_site.db import fetchone_prepared

API_KEY_KEYWORD = "Api-Key"
STAFF_DATA_PERMISSION = "diagnosis.view_diagnosissession"


class ProjectAPIKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`; keys are stored only as hashes (djangorestframework-api-key).

    A revoked or expired key fails at once: every request looks the key up again.
    """

    def authenticate(self, request: Request) -> tuple[AnonymousUser, ProjectAPIKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        keyword, _, key = header.partition(" ")
        if keyword != API_KEY_KEYWORD:
            return None
        key = key.strip()
        if not key:
            raise exceptions.AuthenticationFailed("Empty API key")
        try:
            api_key = _api_key_get(key)
        except ProjectAPIKey.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key") from None
        if api_key.has_expired:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key")
        return AnonymousUser(), api_key

    def authenticate_header(self, request: Request) -> str:
        return API_KEY_KEYWORD


_KEY_FIELDS = ProjectAPIKey._meta.concrete_fields
_PROJECT_FIELDS = Project._meta.concrete_fields
_KEY_COLUMNS = ", ".join([f"k.{f.column}" for f in _KEY_FIELDS] + [f"p.{f.column}" for f in _PROJECT_FIELDS])
_KEY_SQL = (  # names from model metadata; the prefix is a parameter
    f"SELECT {_KEY_COLUMNS} FROM {ProjectAPIKey._meta.db_table} k"  # noqa: S608
    f" JOIN {Project._meta.db_table} p ON p.id = k.project_id WHERE k.prefix = %s AND NOT k.revoked"
)


def _api_key_get(key: str) -> ProjectAPIKey:
    """ProjectAPIKey.objects.get_from_key(key) with its project, as one prepared statement on PostgreSQL.

    Same rows and checks as the library (a usable key by prefix, then its hash verified), read
    on every request as before: a revoked key fails at once. Building and compiling the ORM
    query cost more than the lookup itself; other databases use the library's query.
    """
    if connection.vendor != "postgresql":
        return ProjectAPIKey.objects.get_from_key(key)
    prefix, _, _ = key.partition(".")
    row = fetchone_prepared(_KEY_SQL, [prefix])
    if row is None:
        raise ProjectAPIKey.DoesNotExist("No usable key with this prefix.")
    split = len(_KEY_FIELDS)
    api_key = ProjectAPIKey.from_db(connection.alias, [f.attname for f in _KEY_FIELDS], row[:split])
    project = Project.from_db(connection.alias, [f.attname for f in _PROJECT_FIELDS], row[split:])
    ProjectAPIKey.project.field.set_cached_value(api_key, project)  # as select_related("project") does
    if not api_key.is_valid(key):
        raise ProjectAPIKey.DoesNotExist("Key is not valid.")
    return api_key


@dataclass(frozen=True)
class AccessScope:
    """What the caller may see: one project for a machine client, every project for staff."""

    project_id: int | None
    all_projects: bool = False

    @classmethod
    def from_request(cls, request: Request) -> "AccessScope":
        if isinstance(request.auth, ProjectAPIKey):
            return cls(project_id=request.auth.project_id)
        # Being staff opens the admin, not the data: the API shows a user the sessions the admin
        # would (a staff user holding only, say, the thresholds permission sees no session).
        user = request.user
        if user.is_authenticated and user.is_staff and user.has_perm(STAFF_DATA_PERMISSION):
            return cls(project_id=None, all_projects=True)
        return cls(project_id=-1)  # sees nothing; permissions normally stop such callers first


def request_api_key(request: Request) -> ProjectAPIKey | None:
    return request.auth if isinstance(request.auth, ProjectAPIKey) else None
