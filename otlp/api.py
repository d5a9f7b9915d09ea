"""`POST /v1/traces`: the OTLP/HTTP trace receiver. A thin view over codec.py and the receiver service.

Answers follow the OTLP/HTTP specification: 200 with an ExportTraceServiceResponse (a partial
success names the refused spans), errors with a google.rpc.Status body, both encoded like the
request; 429 and 503 carry Retry-After, which the exporters honour before retrying.
"""

import math
from typing import Any

from django.db import OperationalError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_view
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.authentication import LangfuseBasicAuthentication, ProjectAPIKeyAuthentication
from core.api.bodies import ACCEPTED_CONTENT_ENCODINGS, UnsupportedContentEncoding, body_read
from core.api.permissions import IsProjectClient
from otlp import codec
from otlp.config import ReceiverConfig
from otlp.serializers import ExportTraceServiceResponseSerializer, RpcStatusSerializer
from otlp.services.receiver import otlp_spans_receive

# Seconds an exporter waits before retrying when the database is unavailable (503).
UNAVAILABLE_RETRY_AFTER = 10


def _answers(status_code: int, description: str, serializer: Any = RpcStatusSerializer) -> dict:
    return {
        (status_code, codec.Encoding.PROTOBUF.value): OpenApiResponse(OpenApiTypes.BINARY, description=description),
        (status_code, codec.Encoding.JSON.value): OpenApiResponse(serializer, description=description),
    }


class OtlpTracesView(APIView):
    authentication_classes = [ProjectAPIKeyAuthentication, LangfuseBasicAuthentication]
    permission_classes = [IsProjectClient]
    throttle_scope = "otlp"
    # The view reads the body itself: bounded inflation, and OTLP/JSON's hex ids (codec.py).
    parser_classes: list = []

    def get_exception_handler(self):
        return otlp_exception_handler

    def perform_content_negotiation(self, request: Request, force: bool = False):
        """No 406: every answer is encoded as codec.answer_encoding says (the request's encoding,
        else the one Accept names, else JSON), never by a DRF renderer."""
        return (JSONRenderer(), codec.Encoding.JSON.value)

    @extend_schema(
        operation_id="otlp_traces_export",
        summary="Export traces (OTLP/HTTP): spans of agents instrumented with OpenTelemetry GenAI or OpenInference",
        description=(
            "An OTLP `ExportTraceServiceRequest`, protobuf or OTLP/JSON, optionally gzip- or deflate-compressed. "
            "Spans wait until their trace's root span arrives, then the trace is ingested as a session exactly "
            "like `POST /api/sessions` (docs/otlp.md gives the mapping). Point an "
            "exporter at it with `OTEL_EXPORTER_OTLP_ENDPOINT=<server>` and "
            "`OTEL_EXPORTER_OTLP_HEADERS=Authorization=Api-Key <key>`."
        ),
        tags=["otlp"],
        request={
            codec.Encoding.PROTOBUF.value: OpenApiTypes.BINARY,
            codec.Encoding.JSON.value: OpenApiTypes.OBJECT,
        },
        responses={
            **_answers(
                200,
                "Accepted; `partialSuccess` counts and explains refused spans",
                ExportTraceServiceResponseSerializer,
            ),
            **_answers(
                400,
                "The body is not an ExportTraceServiceRequest (or does not inflate), or none of its spans could be "
                "kept (the message names why, e.g. the attribute the root span lacks)",
            ),
            **_answers(401, "Missing, invalid or revoked API key"),
            **_answers(403, "Not a project API key"),
            **_answers(411, "Chunked body without Content-Length"),
            **_answers(413, "Body, once inflated, over SELFEVAL_OTLP_MAX_BODY_BYTES"),
            **_answers(415, "Content-Type other than protobuf or JSON, or an unsupported Content-Encoding"),
            **_answers(429, "Rate limit of this key exceeded; retry after Retry-After seconds"),
            **_answers(503, "Database unavailable; retry after Retry-After seconds"),
        },
        examples=[
            OpenApiExample(
                "Partial success",
                value={
                    "partialSuccess": {
                        "rejectedSpans": "1",
                        "errorMessage": "trace …: not a valid session: query: This field may not be blank. (1 span)",
                    }
                },
                response_only=True,
                status_codes=["200"],
                media_type=codec.Encoding.JSON.value,
            )
        ],
    )
    def post(self, request: Request) -> HttpResponse:
        encoding = codec.request_encoding(request.content_type)
        config = ReceiverConfig.from_settings()
        body = body_read(
            stream=request.stream,
            content_length=request.META.get("CONTENT_LENGTH"),
            transfer_encoding=request.META.get("HTTP_TRANSFER_ENCODING", ""),
            content_encoding=request.META.get("HTTP_CONTENT_ENCODING", ""),
            max_bytes=config.max_body_bytes,
            limit_name="SELFEVAL_OTLP_MAX_BODY_BYTES",
        )
        message = codec.request_decode(body, encoding)
        result = otlp_spans_receive(project=request.auth.project, message=message, config=config)
        if result.rejected_spans and not result.accepted_spans:
            # Nothing of the request is usable: a 400 the exporter logs (it never reads a partial success).
            raise exceptions.ParseError(f"No span of the request was kept: {result.error_message}")
        answer = ExportTraceServiceResponse()
        if result.rejected_spans:
            answer.partial_success.rejected_spans = result.rejected_spans
            answer.partial_success.error_message = result.error_message
        return HttpResponse(codec.message_encode(answer, encoding), content_type=encoding.value)


def otlp_exception_handler(exc: Exception, context: dict[str, Any]) -> HttpResponse | None:
    """Every refusal as OTLP/HTTP wants it: a google.rpc.Status in the request's encoding."""
    request = context["request"]
    encoding = codec.answer_encoding(request.content_type, request.headers.get("Accept", ""))
    headers: dict[str, str] = {}
    if isinstance(exc, OperationalError):  # connection lost, pool exhausted, deadlock: all transient
        status_code, message = 503, "The database is unavailable; retry later."
        headers["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
    elif isinstance(exc, exceptions.APIException):
        status_code, message = exc.status_code, str(exc.detail)
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(math.ceil(exc.wait))
        if isinstance(exc, UnsupportedContentEncoding):
            headers["Accept-Encoding"] = ACCEPTED_CONTENT_ENCODINGS
    else:
        return None  # a bug: Django's 500, logged
    response = HttpResponse(
        codec.status_encode(status_code, message, encoding), status=status_code, content_type=encoding.value
    )
    for name, value in headers.items():
        response[name] = value
    return response


@extend_schema_view(
    post=extend_schema(
        operation_id="langfuse_otlp_traces_export",
        summary="Export traces as the Langfuse SDK does (OTLP/HTTP at Langfuse's path, Basic auth)",
        description=(
            "The same receiver as `POST /v1/traces`, at the path the Langfuse SDK posts to, authenticated the "
            "Langfuse way: `Authorization: Basic base64(<public key>:<secret key>)` with the API key's prefix as "
            "the public key and the API key as the secret key (`LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY`, "
            "`LANGFUSE_HOST=<server>`)."
        ),
        tags=["otlp"],
    )
)
class LangfuseOtlpTracesView(OtlpTracesView):
    """`POST /api/public/otel/v1/traces`: where the Langfuse SDK (v3 and later) exports its spans."""
