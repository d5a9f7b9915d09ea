"""The feedback API: `POST /api/feedback` (seed document 000, section 7) and end-user feedback tokens."""

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.authentication import ProjectAPIKeyAuthentication, access_from_request
from core.api.errors import api_exception_handler
from core.api.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotency_key
from core.api.permissions import IsProjectClient
from core.api.schema import (
    ERROR_DESCRIPTIONS,
    ERROR_ENVELOPE,
    WRITE_ERRORS,
    error_responses,
)
from core.api.structs import struct_from_body
from diagnosis.models import DiagnosisSession
from diagnosis.selectors import session_get
from feedback.authentication import CanSubmitFeedback, FeedbackTokenAuthentication, feedback_submitter
from feedback.serializers import (
    FeedbackErrorSerializer,
    FeedbackInput,
    FeedbackResponseSerializer,
    FeedbackTokenInputSerializer,
    FeedbackTokenSerializer,
)
from feedback.services import RECORDED_MESSAGE, feedback_submit
from feedback.tokens import feedback_token_issue


def feedback_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The project's error handling, answered in seed document 000's `{success, message}` envelope."""
    response = api_exception_handler(exc, context)
    if response is None:
        return None
    error = response.data.get("error", {}) if isinstance(response.data, dict) else {}
    fields = error.get("fields") or {}
    if fields:
        message = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items())
    else:
        message = error.get("message") or "Request refused"
    response.data = {"success": False, "message": message}
    return response


def _feedback_errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Seed document 000's envelope for every refusal; an unexpected 500 keeps the project's error envelope."""
    descriptions = {
        **ERROR_DESCRIPTIONS,
        400: "Invalid feedback value, malformed JSON or wrong field types",
        401: "Missing or invalid credentials; expired or tampered feedback token",
        403: "Not staff, or a feedback token bound to another session",
        404: "Unknown session, or another project's",
        429: "Feedback rate limit of this client exceeded; retry after Retry-After seconds",
    }
    answers = {code: OpenApiResponse(FeedbackErrorSerializer, description=descriptions[code]) for code in statuses}
    return {**answers, **error_responses(500, envelope=ERROR_ENVELOPE)}


class FeedbackView(APIView):
    authentication_classes = [ProjectAPIKeyAuthentication, FeedbackTokenAuthentication, SessionAuthentication]
    permission_classes = [CanSubmitFeedback]
    throttle_scope = "feedback"

    def get_exception_handler(self):
        return feedback_exception_handler

    @extend_schema(
        summary="Record user feedback on an answer",
        description=(
            "`useful` stores the feedback and creates or reuses the session's case (its id is `caseId`); "
            "`not_useful` stores the feedback and opens or adds to the session's bad case (`caseId` is null). "
            "The session's status never changes. Authenticate with `Api-Key`, a staff session, or "
            "`Authorization: Feedback-Token <token>` (one vote per end user per session; a new vote replaces "
            "the previous one). Errors use the same envelope with `success: false`. "
            "Send an `Idempotency-Key` header to make a retry safe: a retried vote is stored once and answered "
            "as the first time."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=FeedbackInput,
        responses={
            200: FeedbackResponseSerializer,
            **_feedback_errors(400, 401, 403, 404, 406, 413, 415, 422, 429, 503),
        },
        examples=[
            OpenApiExample("useful", value={"sessionId": "s-20261129-0001", "feedback": "useful"}, request_only=True),
            OpenApiExample(
                "recorded",
                value={"success": True, "message": RECORDED_MESSAGE, "caseId": "0b8c6c1e-9a4e-4f7e-8f59-3f1f5f0f8b1a"},
                response_only=True,
                status_codes=["200"],
            ),
            OpenApiExample(
                "bad value",
                value={"success": False, "message": "feedback: 'meh' is not one of: useful, not_useful."},
                response_only=True,
                status_codes=["400"],
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        key = idempotency_key(request)
        body = struct_from_body(request.data, FeedbackInput)
        result = feedback_submit(
            submitter=feedback_submitter(request),
            session_id=body.session_id,
            value=body.feedback,
            comment=body.comment,
            reviewer=body.reviewer,
            project_slug=body.project or None,
            idempotency_key=key,
        )
        return Response(result.answer.body, status=result.answer.status)


class FeedbackTokenView(APIView):
    permission_classes = [IsProjectClient]
    throttle_scope = "feedback_token"

    @extend_schema(
        summary="Issue a feedback token for an end user's browser",
        description=(
            "A short-lived signed token (SELFEVAL_FEEDBACK_TOKEN_TTL seconds, 15 minutes by default) bound to this "
            "session and end user. The browser sends it as `Authorization: Feedback-Token <token>` to "
            "POST /api/feedback, without ever seeing the API key. Project API keys only."
        ),
        request=FeedbackTokenInputSerializer,
        responses={200: FeedbackTokenSerializer, **error_responses(*WRITE_ERRORS, 404)},
    )
    def post(self, request: Request, session_id: str) -> Response:
        serializer = FeedbackTokenInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        session = session_get(
            access=access_from_request(request),
            session_id=session_id,
            queryset=DiagnosisSession.objects.only("pk", "project_id", "session_id"),
        )
        issued = feedback_token_issue(session=session, end_user_id=serializer.validated_data["endUserId"])
        return Response(FeedbackTokenSerializer(issued).data)
