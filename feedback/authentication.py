"""`Authorization: Feedback-Token <token>`: an end user's browser voting on one session."""

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from core.api.authentication import STAFF_DATA_PERMISSION
from core.api.throttling import AuthenticationFailureThrottle
from core.tenancy.access import Access
from core.tenancy.models import ProjectAPIKey
from feedback.models import FeedbackClient
from feedback.services import FeedbackSubmitter
from feedback.tokens import FeedbackGrant, FeedbackTokenError, feedback_token_read

FEEDBACK_TOKEN_KEYWORD = "Feedback-Token"  # noqa: S105 (a header keyword, not a secret)


class FeedbackTokenAuthentication(authentication.BaseAuthentication):
    """`request.auth` becomes the token's FeedbackGrant; expired or forged tokens are a 401 (and
    count against the client's address, as failed API keys do)."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, FeedbackGrant] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        keyword, _, token = header.partition(" ")
        if keyword != FEEDBACK_TOKEN_KEYWORD:
            return None
        grant = AuthenticationFailureThrottle().guard(
            request, lambda: _granted(token.strip()), credential="feedback-token"
        )
        # The throttle counts token requests per end user of a project (see ClientScopedRateThrottle).
        request.feedback_end_user = f"{grant.project_id}/{grant.end_user_id}"
        return AnonymousUser(), grant

    def authenticate_header(self, request: Request) -> str:
        return FEEDBACK_TOKEN_KEYWORD


def _granted(token: str) -> FeedbackGrant:
    if not token:
        raise exceptions.AuthenticationFailed("Empty feedback token")
    try:
        return feedback_token_read(token=token)
    except FeedbackTokenError as error:
        raise exceptions.AuthenticationFailed(str(error)) from None


class CanSubmitFeedback(permissions.BasePermission):
    """A project API key, a feedback token, or a logged-in staff user."""

    message = "Authentication with a project API key, a feedback token or a staff session is required."

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, (ProjectAPIKey, FeedbackGrant)):
            return True
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)


def feedback_submitter(request: Request) -> FeedbackSubmitter:
    """Who is voting, from the request's authentication (the one place that tells the kinds apart)."""
    auth = request.auth
    if isinstance(auth, ProjectAPIKey):
        return FeedbackSubmitter(access=Access.to_project(auth.project_id), client=FeedbackClient.API_KEY, api_key=auth)
    if isinstance(auth, FeedbackGrant):
        return FeedbackSubmitter(
            access=Access.to_project(auth.project_id),
            client=FeedbackClient.TOKEN,
            end_user_id=auth.end_user_id,
            session_pk=auth.session_pk,
            session_id=auth.session_id,
        )
    return FeedbackSubmitter(
        access=Access.for_user(request.user, permission=STAFF_DATA_PERMISSION),
        client=FeedbackClient.ADMIN,
        user=request.user,
    )


class FeedbackTokenScheme(OpenApiAuthenticationExtension):
    """Describes the feedback token in the OpenAPI schema."""

    target_class = "feedback.authentication.FeedbackTokenAuthentication"
    name = "FeedbackToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Feedback-Token <token>` from POST /api/sessions/<sessionId>/feedback-token.",
        }
