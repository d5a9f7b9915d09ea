"""Who is calling: a machine client with a project API key, or a staff user with a session."""

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from diagnosis.models import ProjectAPIKey

API_KEY_KEYWORD = "Api-Key"


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
            api_key = ProjectAPIKey.objects.get_from_key(key)
        except ProjectAPIKey.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key") from None
        if api_key.has_expired:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key")
        return AnonymousUser(), api_key

    def authenticate_header(self, request: Request) -> str:
        return API_KEY_KEYWORD


@dataclass(frozen=True)
class AccessScope:
    """What the caller may see: one project for a machine client, every project for staff."""

    project_id: int | None
    all_projects: bool = False

    @classmethod
    def from_request(cls, request: Request) -> "AccessScope":
        if isinstance(request.auth, ProjectAPIKey):
            return cls(project_id=request.auth.project_id)
        if request.user.is_authenticated and request.user.is_staff:
            return cls(project_id=None, all_projects=True)
        return cls(project_id=-1)  # sees nothing; permissions normally stop such callers first


def request_api_key(request: Request) -> ProjectAPIKey | None:
    return request.auth if isinstance(request.auth, ProjectAPIKey) else None
