"""Short-lived signed feedback tokens: an end user's browser may vote on one session, nothing else.

A token is `django.core.signing.dumps` of {project id, session pk, sessionId, end user id} with
its own salt and a timestamp, so it cannot be forged without SECRET_KEY, cannot be replayed for
another session and stops working SELFEVAL_FEEDBACK_TOKEN_TTL seconds after it was issued.
Nothing is stored: a token is checked by its signature alone.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.utils import timezone

from diagnosis.models import DiagnosisSession

TOKEN_SALT = "selfeval.feedback.token.v1"  # noqa: S105 (a signing namespace, not a secret)


class FeedbackTokenError(Exception):
    """The token is expired, tampered with or not a feedback token at all."""


@dataclass(frozen=True, slots=True)
class FeedbackGrant:
    """What a valid token allows: `request.auth` of a token-authenticated request."""

    project_id: int
    session_pk: int
    session_id: str
    end_user_id: str


@dataclass(frozen=True, slots=True)
class IssuedToken:
    token: str
    expires_at: datetime


def token_ttl_seconds() -> int:
    return settings.SELFEVAL_FEEDBACK_TOKEN_TTL


def feedback_token_issue(*, session: DiagnosisSession, end_user_id: str) -> IssuedToken:
    payload = {"p": session.project_id, "s": session.pk, "sid": session.session_id, "u": end_user_id}
    token = signing.dumps(payload, salt=TOKEN_SALT)
    return IssuedToken(token=token, expires_at=timezone.now() + timedelta(seconds=token_ttl_seconds()))


def feedback_token_read(*, token: str) -> FeedbackGrant:
    """The grant a token carries; raises FeedbackTokenError when expired or not genuine."""
    try:
        payload = signing.loads(token, salt=TOKEN_SALT, max_age=token_ttl_seconds())
    except signing.SignatureExpired:
        raise FeedbackTokenError("Feedback token has expired") from None
    except signing.BadSignature:
        raise FeedbackTokenError("Feedback token is not valid") from None
    try:
        return FeedbackGrant(
            project_id=int(payload["p"]),
            session_pk=int(payload["s"]),
            session_id=str(payload["sid"]),
            end_user_id=str(payload["u"]),
        )
    except (KeyError, TypeError, ValueError):
        raise FeedbackTokenError("Feedback token is not valid") from None
