"""Evolution API: verify a new answer version; read and change the thresholds."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.authentication import request_api_key
from core.api.errors import ApplicationError
from core.api.permissions import IsProjectClientOrStaff
from core.api.schema import ALWAYS_ERRORS, WRITE_ERRORS, error_responses
from evolution.models import VerificationSource
from evolution.selectors import thresholds_current
from evolution.serializers import (
    ThresholdsSerializer,
    ThresholdsUpdateSerializer,
    VerificationResultSerializer,
    VerifyRequestSerializer,
)
from evolution.services.thresholds import ThresholdValidationError, thresholds_update
from evolution.services.verification import evolution_verify

CHANGE_THRESHOLDS_PERMISSION = "evolution.change_verificationthresholds"


def _request_lang(request: Request, explicit: str | None) -> str | None:
    """The body's `lang`, else the Accept-Language header when one was sent, else None (the
    service then follows the query's language)."""
    if explicit:
        return explicit
    if request.headers.get("Accept-Language"):
        return "zh" if request.LANGUAGE_CODE.startswith("zh") else "en"
    return None


class CanChangeThresholds(permissions.BasePermission):
    """Anyone allowed on the API may read; only staff with the change permission may write."""

    message = "Changing thresholds requires a staff user with the evolution.change_verificationthresholds permission."

    def has_permission(self, request: Request, view: object) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        user = request.user
        return bool(user and user.is_authenticated and user.is_staff and user.has_perm(CHANGE_THRESHOLDS_PERMISSION))


class EvolutionVerifyView(APIView):
    throttle_scope = "evolution"
    permission_classes = [IsProjectClientOrStaff]

    @extend_schema(
        summary="Verify that a new answer version really beats the old one",
        request=VerifyRequestSerializer,
        responses={200: VerificationResultSerializer, **error_responses(*WRITE_ERRORS)},
    )
    def post(self, request: Request) -> Response:
        serializer = VerifyRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        api_key = request_api_key(request)
        result = evolution_verify(
            query=data["query"],
            old_response=data["oldResponse"],
            new_response=data["newResponse"],
            user_feedback=data["userFeedback"],
            lang=_request_lang(request, data.get("lang")),
            compare_competitors=data["compareCompetitors"],
            source=VerificationSource.API,
            user=request.user,
            project=api_key.project if api_key else None,
        )
        return Response(result.to_dict())


class EvolutionThresholdsView(APIView):
    throttle_scope = "thresholds"
    permission_classes = [IsProjectClientOrStaff, CanChangeThresholds]

    @extend_schema(
        summary="The verification thresholds in force",
        responses={200: ThresholdsSerializer, **error_responses(*ALWAYS_ERRORS)},
    )
    def get(self, request: Request) -> Response:
        return Response(ThresholdsSerializer(thresholds_current()).data)

    @extend_schema(
        summary="Change some or all thresholds (staff with the change permission)",
        request=ThresholdsUpdateSerializer,
        responses={200: OpenApiResponse(ThresholdsSerializer), **error_responses(*WRITE_ERRORS)},
    )
    def put(self, request: Request) -> Response:
        serializer = ThresholdsUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            thresholds_update(changes=serializer.validated_data["thresholds"], user=request.user, source="api")
        except ThresholdValidationError as exc:
            fields = {f"thresholds.{name}": messages for name, messages in exc.fields.items()}
            raise ApplicationError(f"Invalid thresholds: {', '.join(sorted(fields))}", fields=fields) from None
        return Response(ThresholdsSerializer(thresholds_current()).data)
