"""Who is calling an API: a machine client with a project API key, or a staff user with a session."""

import base64
import binascii

from django.contrib.auth.models import AnonymousUser
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from core.api.throttling import AuthenticationFailureThrottle, api_key_credential
from core.tenancy.access import Access
from core.tenancy.models import ProjectAPIKey
from core.tenancy.services import InvalidAPIKey, api_key_verify

API_KEY_KEYWORD = "Api-Key"
# What a staff user needs to read sessions (and traces) through the API, as in the admin.
STAFF_DATA_PERMISSION = "diagnosis.view_diagnosissession"


class ProjectAPIKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`; keys are stored only as hashes (djangorestframework-api-key).

    Verified through the tenancy service's cache, which a revoked key never passes. Failures
    count against the client's address and the key's prefix (AuthenticationFailureThrottle,
    THROTTLE_AUTH_FAILURES).
    """

    def authenticate(self, request: Request) -> tuple[AnonymousUser, ProjectAPIKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        keyword, _, key = header.partition(" ")
        if keyword != API_KEY_KEYWORD:
            return None
        key = key.strip()
        return AuthenticationFailureThrottle().guard(
            request, lambda: (AnonymousUser(), _verified(key)), credential=api_key_credential(key)
        )

    def authenticate_header(self, request: Request) -> str:
        return API_KEY_KEYWORD


class LangfuseBasicAuthentication(authentication.BaseAuthentication):
    """`Authorization: Basic base64(<public key>:<secret key>)`, as the Langfuse SDK sends its OTLP
    export: the public key is the API key's prefix (the part before the dot), the secret key the
    whole API key. Failures count as ProjectAPIKeyAuthentication's do."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, ProjectAPIKey] | None:
        keyword, _, encoded = authentication.get_authorization_header(request).partition(b" ")
        if keyword.lower() != b"basic":
            return None
        try:
            public, _, secret = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise exceptions.AuthenticationFailed("Malformed Basic credentials") from None

        def verified() -> tuple[AnonymousUser, ProjectAPIKey]:
            if secret.partition(".")[0] != public:
                raise exceptions.AuthenticationFailed(
                    "The public key must be the API key's prefix (before the dot), the secret key the API key"
                )
            return AnonymousUser(), _verified(secret)

        return AuthenticationFailureThrottle().guard(request, verified, credential=api_key_credential(secret))

    def authenticate_header(self, request: Request) -> str:
        return 'Basic realm="SelfEval"'


def _verified(key: str) -> ProjectAPIKey:
    if not key:
        raise exceptions.AuthenticationFailed("Empty API key")
    try:
        return api_key_verify(key=key)
    except InvalidAPIKey:
        raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key") from None


def request_api_key(request: Request) -> ProjectAPIKey | None:
    return request.auth if isinstance(request.auth, ProjectAPIKey) else None


def access_from_request(request: Request, *, staff_permission: str = STAFF_DATA_PERMISSION) -> Access:
    """A key sees its project; staff holding `staff_permission` see every project; others nothing."""
    api_key = request_api_key(request)
    if api_key is not None:
        return Access.to_project(api_key.project_id)
    return Access.for_user(request.user, permission=staff_permission)
