"""Session ingestion and read API: thin views over `diagnosis.services` and `diagnosis.selectors`."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from diagnosis import selectors
from diagnosis.filters import SessionFilter
from diagnosis.serializers import SessionDetailSerializer, SessionIngestSerializer, SessionSummarySerializer
from diagnosis.services.ingestion import session_upsert
from selfeval_site.api.authentication import access_from_request
from selfeval_site.api.pagination import CheckedCursorPagination
from selfeval_site.api.permissions import IsProjectClient, IsProjectClientOrStaff
from selfeval_site.api.schema import CONTENT_ENCODING_PARAMETER, READ_ERRORS, WRITE_ERRORS, error_responses

PROJECT_PARAMETER = OpenApiParameter(
    "project", str, description="Staff only: the project slug when a sessionId exists in several projects."
)


class SessionCursorPagination(CheckedCursorPagination):
    ordering = ("-created_at", "-id")


@extend_schema_view(
    list=extend_schema(
        summary="List sessions", responses={200: SessionSummarySerializer(many=True), **error_responses(*READ_ERRORS)}
    ),
    retrieve=extend_schema(
        summary="One session with steps, invocations and evidence",
        parameters=[PROJECT_PARAMETER],
        responses={200: SessionDetailSerializer, **error_responses(*READ_ERRORS)},
    ),
)
class SessionViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    lookup_field = "session_id"
    lookup_url_kwarg = "session_id"
    lookup_value_regex = r"[^/]+"
    filterset_class = SessionFilter
    pagination_class = SessionCursorPagination
    serializer_class = SessionSummarySerializer

    @property
    def throttle_scope(self) -> str:
        """Recording sessions and reading them are budgeted apart (THROTTLE_INGESTION, THROTTLE_SESSIONS)."""
        return "ingestion" if self.action == "create" else "sessions"

    def get_permissions(self):
        if self.action == "create":
            return [IsProjectClient()]
        return [IsProjectClientOrStaff()]

    def get_queryset(self):
        return selectors.session_list(access=access_from_request(self.request))

    def retrieve(self, request: Request, session_id: str) -> Response:
        session = selectors.session_with_children(
            access=access_from_request(request),
            session_id=session_id,
            project_slug=request.query_params.get("project"),
        )
        return Response(SessionDetailSerializer(session).data)

    @extend_schema(
        summary="Create or replace a session (idempotent upsert on sessionId)",
        request=SessionIngestSerializer,
        parameters=[CONTENT_ENCODING_PARAMETER],
        responses={
            201: OpenApiResponse(SessionSummarySerializer, description="Created"),
            200: OpenApiResponse(SessionSummarySerializer, description="Replaced"),
            **error_responses(*WRITE_ERRORS),
        },
    )
    def create(self, request: Request) -> Response:
        serializer = SessionIngestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = session_upsert(project=request.auth.project, data=serializer.validated_data)
        return Response(
            SessionSummarySerializer(result.session).data,
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )
