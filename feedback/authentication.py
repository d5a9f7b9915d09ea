"""`Authorization: Feedback-Token <token>`: an end user's browser voting on one session."""

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from diagnosis.models import ProjectAPIKey
from feedback.tokens import FeedbackGrant, FeedbackTokenError, feedback_token_read

FEEDBACK_TOKEN_KEYWORD = "Feedback-Token"  # noqa: S105 (a header keyword, not a secret)


class FeedbackTokenAuthentication(authentication.BaseAuthentication):
    """`request.auth` becomes the token's FeedbackGrant; expired or forged tokens are a 401."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, FeedbackGrant] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        keyword, _, token = header.partition(" ")
        if keyword != FEEDBACK_TOKEN_KEYWORD:
            return None
        token = token.strip()
        if not token:
            raise exceptions.AuthenticationFailed("Empty feedback token")
        try:
            grant = feedback_token_read(token=token)
        except FeedbackTokenError as error:
            raise exceptions.AuthenticationFailed(str(error)) from None
        # The throttle counts token requests per end user of a project (see ClientScopedRateThrottle).
        request.feedback_end_user = f"{grant.project_id}/{grant.end_user_id}"
        return AnonymousUser(), grant

    def authenticate_header(self, request: Request) -> str:
        return FEEDBACK_TOKEN_KEYWORD


class CanSubmitFeedback(permissions.BasePermission):
    """A project API key, a feedback token, or a logged-in staff user."""

    message = "Authentication with a project API key, a feedback token or a staff session is required."

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, (ProjectAPIKey, FeedbackGrant)):
            return True
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)


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
