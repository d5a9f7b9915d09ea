"""Session ingestion and read API: thin views over `diagnosis.services` and `diagnosis.selectors`."""

from django.conf import settings
from django.db import DatabaseError, OperationalError
from django.http import HttpResponseBase
from django.utils.cache import get_conditional_response
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.authentication import access_from_request
from core.api.errors import error_body, flatten_field_errors
from core.api.filters import KnownQueryParametersMixin
from core.api.idempotency import (
    IDEMPOTENCY_KEY_PARAMETER,
    StoredAnswer,
    api_key_client,
    idempotency_key,
    idempotent_answer,
    request_fingerprint,
)
from core.api.pagination import CheckedCursorPagination
from core.api.parsers import CheckedJSONParser, NDJSONParser, UnreadableLine
from core.api.permissions import IsProjectClient, IsProjectClientOrStaff
from core.api.schema import READ_ERRORS, WRITE_ERRORS, conditional_get, error_responses
from diagnosis import selectors
from diagnosis.filters import SessionFilter
from diagnosis.serializers import (
    BatchResultSerializer,
    SessionDetailSerializer,
    SessionIngest,
    SessionSummarySerializer,
    session_ingest_from_body,
    session_summary,
)
from diagnosis.services.ingestion import session_upsert
from diagnosis.services.trace_version import version_etag

PROJECT_PARAMETER = OpenApiParameter(
    "project", str, description="Staff only: the project slug when a sessionId exists in several projects."
)
SESSION_CONDITIONAL_PARAMETERS, SESSION_NOT_MODIFIED = conditional_get("the session")
# One more whenever SessionDetailSerializer changes what it answers: clients' ETags then never name a
# body of an older build.
SESSION_BODY_FORMAT = 1


class SessionCursorPagination(CheckedCursorPagination):
    ordering = ("-created_at", "-id")


@extend_schema_view(
    list=extend_schema(
        summary="List sessions", responses={200: SessionSummarySerializer(many=True), **error_responses(*READ_ERRORS)}
    ),
    retrieve=extend_schema(
        summary="One session with steps, invocations and evidence",
        description=(
            "The session as stored. An unchanged session is answered by a 304 to its ETag (one query), which "
            "is not the trace's ETag: the two answers of one version have different bodies."
        ),
        parameters=[PROJECT_PARAMETER, *SESSION_CONDITIONAL_PARAMETERS],
        responses={200: SessionDetailSerializer, **SESSION_NOT_MODIFIED, **error_responses(*READ_ERRORS)},
    ),
)
class SessionViewSet(KnownQueryParametersMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    lookup_field = "session_id"
    lookup_url_kwarg = "session_id"
    lookup_value_regex = r"[^/]+"
    filterset_class = SessionFilter
    pagination_class = SessionCursorPagination
    serializer_class = SessionSummarySerializer

    @property
    def throttle_scope(self) -> str:
        """Recording sessions and reading them are budgeted apart (THROTTLE_INGESTION, THROTTLE_SESSIONS)."""
        return "ingestion" if self.action in ("create", "batch") else "sessions"

    def get_permissions(self):
        if self.action in ("create", "batch"):
            return [IsProjectClient()]
        return [IsProjectClientOrStaff()]

    def get_queryset(self):
        return selectors.session_list(access=access_from_request(self.request))

    def retrieve(self, request: Request, session_id: str) -> HttpResponseBase:
        session = selectors.session_get(
            access=access_from_request(request),
            session_id=session_id,
            project_slug=request.query_params.get("project"),
        )
        etag = version_etag(
            route="session",
            session_pk=session.pk,
            version=session.trace_version,
            depends_on=[SESSION_BODY_FORMAT, session.project.slug],
        )
        response = get_conditional_response(request, etag=etag)
        if response is None:
            response = Response(SessionDetailSerializer(selectors.session_children_loaded(session)).data)
        response["ETag"] = etag
        return response

    @extend_schema(
        summary="Create or replace a session (idempotent upsert on sessionId)",
        request=SessionIngest,
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        responses={
            201: OpenApiResponse(SessionSummarySerializer, description="Created"),
            200: OpenApiResponse(SessionSummarySerializer, description="Replaced"),
            **error_responses(*WRITE_ERRORS, 422),
        },
    )
    def create(self, request: Request) -> Response:
        key = idempotency_key(request)
        payload = session_ingest_from_body(request.data)
        project = request.auth.project

        def ingest() -> StoredAnswer:
            result = session_upsert(project=project, data=payload)
            return StoredAnswer(
                status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
                body=session_summary(result.session),
            )

        answer = idempotent_answer(
            client=api_key_client(request.auth),
            key=key,
            fingerprint=request_fingerprint("sessions", request.data) if key else "",
            work=ingest,
        )
        return Response(answer.body, status=answer.status)

    @extend_schema(
        summary="Create or replace many sessions: a JSON array or NDJSON, one result per item, in order",
        description=(
            "The body is a JSON array of session payloads (`application/json`) or one payload per line "
            "(`application/x-ndjson`), at most SELFEVAL_BATCH_MAX_ITEMS (`maxItems`) of them (more is a 400 before "
            "any item is read), each a JSON object (anything else is a 400 for the whole batch). Each item is "
            "validated and stored exactly as `POST /api/sessions` stores one (`SessionIngestRequest`), "
            "in its own transaction: an invalid item is refused alone, with its fields, and never leaves part of "
            "itself behind; the others are stored. `results[i]` answers item i: `created`, `replaced` or "
            "`error`. Send `Content-Encoding: gzip` to compress the body (the size limit applies inflated). "
            "With an `Idempotency-Key` the whole batch is one transaction, answered once: a retry gets the first "
            "answer and stores nothing again."
        ),
        request={
            # An array of objects: each is validated on its own and answered in its result, so an item
            # that is not a valid SessionIngestRequest (the component the NDJSON lines are) is no
            # refusal of the request.
            "application/json": {
                "type": "array",
                "items": {"type": "object", "description": "A session payload (`SessionIngestRequest`)."},
                "maxItems": settings.SELFEVAL_BATCH_MAX_ITEMS,
            },
            # A sequence of JSON texts, which JSON Schema cannot describe as a value: the body is text, its
            # lines are SessionIngestRequest objects (OpenAPI 3.2's `itemSchema`, written as an extension).
            NDJSONParser.media_type: {
                "type": "string",
                "contentMediaType": NDJSONParser.media_type,
                "description": "One SessionIngestRequest JSON object per line (blank lines are skipped).",
                "x-itemSchema": {"$ref": "#/components/schemas/SessionIngestRequest"},
            },
        },
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        responses={200: BatchResultSerializer, **error_responses(*WRITE_ERRORS, 422)},
    )
    @action(detail=False, methods=["post"], url_path="batch", parser_classes=[CheckedJSONParser, NDJSONParser])
    def batch(self, request: Request) -> Response:
        items = request.data
        if not isinstance(items, list):
            raise serializers.ValidationError({"non_field_errors": ["Send a JSON array of sessions, or NDJSON."]})
        limit = settings.SELFEVAL_BATCH_MAX_ITEMS
        if len(items) > limit:
            raise serializers.ValidationError(
                {"non_field_errors": [f"A batch holds at most {limit} sessions (SELFEVAL_BATCH_MAX_ITEMS)."]}
            )
        not_objects = {
            str(index): ["Expected a session object."]
            for index, item in enumerate(items)
            if not isinstance(item, (dict, UnreadableLine))
        }
        if not_objects:
            raise serializers.ValidationError(not_objects)
        key = idempotency_key(request)
        project = request.auth.project

        def ingest() -> StoredAnswer:
            return StoredAnswer(
                status=status.HTTP_200_OK,
                body={"results": [_batch_item(project, index, item) for index, item in enumerate(items)]},
            )

        fingerprint = (
            request_fingerprint(
                "sessions/batch",
                [{"unreadableLine": i.line, "fields": i.fields} if isinstance(i, UnreadableLine) else i for i in items],
            )
            if key
            else ""  # only a key's record keeps it
        )
        answer = idempotent_answer(client=api_key_client(request.auth), key=key, fingerprint=fingerprint, work=ingest)
        return Response(answer.body, status=answer.status)


def _batch_item(project, index: int, item) -> dict:
    """One item of a batch, stored as POST /api/sessions stores a session (session_upsert runs its
    own transaction), or its error; a session id is echoed when the item names one."""
    session_id = item.get("sessionId") if isinstance(item, dict) and isinstance(item.get("sessionId"), str) else None
    answer = {"index": index, "sessionId": session_id}
    if isinstance(item, UnreadableLine):
        return {**answer, "status": "error", **error_body("invalid", f"Line {item.line} is unreadable", item.fields)}
    try:
        payload = session_ingest_from_body(item)
    except serializers.ValidationError as error:
        fields = flatten_field_errors(error.detail)
        return {
            **answer,
            "status": "error",
            **error_body("invalid", f"Invalid input: {', '.join(sorted(fields))}", fields),
        }
    try:
        result = session_upsert(project=project, data=payload)
    except OperationalError:
        raise  # the database is unavailable: the whole request is a 503, as for one session
    except DatabaseError as error:  # refused by the database: this item only, rolled back
        return {
            **answer,
            "status": "error",
            **error_body("database_refused", f"The database refused the session: {error}"),
        }
    return {
        **answer,
        "status": "created" if result.created else "replaced",
        "session": session_summary(result.session),
    }
