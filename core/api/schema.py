"""Shared OpenAPI pieces: the error envelope, the error statuses each kind of operation really answers,
and the schema's post-processing.

`Content-Encoding` is no operation parameter: it is a header of the transport, set by the HTTP client
that compresses the body (a client generated from a parameter would send the header over a plain
body). The API's description (SPECTACULAR_SETTINGS) says which codings every write endpoint takes."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers

from core.api.fields import NOT_BLANK_PATTERN

ERROR_ENVELOPE = inline_serializer(
    name="ErrorEnvelope",
    fields={
        "error": inline_serializer(
            name="Error",
            fields={
                "code": serializers.CharField(),
                "message": serializers.CharField(),
                "fields": serializers.DictField(
                    child=serializers.ListField(child=serializers.CharField()), required=False
                ),
            },
        )
    },
)

ERROR_DESCRIPTIONS = {
    400: "Invalid input; `fields` names each invalid field (also a NUL in the URL, a body that does not inflate)",
    401: "Missing, invalid, expired or revoked credentials",
    403: "Authenticated but not allowed (not staff, or a project key where a staff user is needed)",
    404: "Unknown, or not in the caller's project (also an invalid pagination cursor)",
    406: "An Accept header that admits no JSON",
    413: "Body over SELFEVAL_MAX_BODY_BYTES, declared or once inflated",
    415: "Content-Type other than the ones documented, or a Content-Encoding other than gzip or deflate",
    422: "This Idempotency-Key was already used with another request body",
    429: "Rate limit of this client exceeded; retry after Retry-After seconds",
    500: "Unexpected server error (a bug, logged)",
    503: "Database unavailable; retry after Retry-After seconds",
}
# Every operation may answer these: a NUL in the URL, credentials, an Accept without JSON, rate
# limits, a bug, the database.
ALWAYS_ERRORS = (400, 401, 403, 406, 429, 500, 503)
READ_ERRORS = (*ALWAYS_ERRORS, 404)
WRITE_ERRORS = (*ALWAYS_ERRORS, 413, 415)


def error_responses(*statuses: int, envelope=ERROR_ENVELOPE) -> dict[int, OpenApiResponse]:
    """The documented error answers of an operation, each with the envelope as its body."""
    return {code: OpenApiResponse(envelope, description=ERROR_DESCRIPTIONS[code]) for code in sorted(set(statuses))}


def conditional_get(what: str) -> tuple[list[OpenApiParameter], dict[int, OpenApiResponse]]:
    """The parameters and the 304 of a read answered by the version of `what` (the trace, the session):
    `If-None-Match` asked, `ETag` answered on 200 and 304 (diagnosis.services.trace_version.version_etag)."""
    parameters = [
        OpenApiParameter(
            "If-None-Match",
            str,
            OpenApiParameter.HEADER,
            description=f"The ETag of {what} the client holds: a 304 without a body while {what} is unchanged.",
        ),
        OpenApiParameter(
            "ETag",
            str,
            OpenApiParameter.HEADER,
            response=[200, 304],
            description=f"This version of {what} (any write to the session makes a new one), for If-None-Match.",
        ),
    ]
    return parameters, {304: OpenApiResponse(description=f"Not modified: {what} is still the one If-None-Match names")}


def write_bodies_required(result: dict, generator, request, public) -> dict:
    """drf-spectacular post-processing hook: every write operation needs its body. It infers that
    from a serializer's required fields; POST /v1/traces's export request (protobuf, or OTLP/JSON
    with no required field) gives it none, and a client generated from the schema would post nothing."""
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method in {"post", "put", "patch"} and "requestBody" in operation:
                operation["requestBody"]["required"] = True
    return result


class StrictCharFieldSchema(OpenApiSerializerFieldExtension):
    """A StrictCharField that is not `allow_blank` needs a character other than whitespace."""

    target_class = "core.api.fields.StrictCharField"

    def map_serializer_field(self, auto_schema, direction):
        # drf-spectacular adds the field's metadata (nullable, minLength, default) and its length
        # validators around what this returns, as for any CharField.
        return {"type": "string"} if self.target.allow_blank else {"type": "string", "pattern": NOT_BLANK_PATTERN}


class ProjectAPIKeyScheme(OpenApiAuthenticationExtension):
    target_class = "core.api.authentication.ProjectAPIKeyAuthentication"
    name = "ProjectApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>`: a per-project key created with `manage.py create_api_key`.",
        }


class LangfuseBasicScheme(OpenApiAuthenticationExtension):
    target_class = "core.api.authentication.LangfuseBasicAuthentication"
    name = "LangfuseBasic"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "basic",
            "description": "Langfuse SDK credentials: the API key's prefix as the public key, the API key as the secret.",
        }


# The answers' headers every operation documents: each is throttled (a test holds every API view to a
# throttle scope), so each answer past authentication says its budget; a 429 or a 503 says when to retry.
RESPONSE_HEADERS = {
    "RateLimit-Policy": {
        "description": "The operation's quota policy, named after its throttle scope (draft-ietf-httpapi-ratelimit-"
        'headers-10): `"<scope>";q=<requests>;w=<window seconds>`. Absent when the request was refused before '
        "it was counted (credentials).",
        "schema": {"type": "string"},
        "example": '"feedback";q=600;w=60',
    },
    "RateLimit": {
        "description": 'What is left of the policy\'s window: `"<scope>";r=<requests left>;t=<seconds until it '
        "resets>`.",
        "schema": {"type": "string"},
        "example": '"feedback";r=597;t=42',
    },
}
RETRY_AFTER_HEADER = {
    "description": "Seconds to wait before retrying",
    "schema": {"type": "integer", "minimum": 0},
    "example": 30,
}
RETRY_AFTER_STATUSES = {"429", "503"}


def response_headers_postprocess(result: dict, generator, request, public: bool) -> dict:
    """drf-spectacular postprocessing hook: the RateLimit headers on every answer of every operation,
    Retry-After on its 429 and 503, each defined once under components.headers."""
    headers = result.setdefault("components", {}).setdefault("headers", {})
    headers.update(RESPONSE_HEADERS)
    headers["Retry-After"] = RETRY_AFTER_HEADER
    references = {name: {"$ref": f"#/components/headers/{name}"} for name in RESPONSE_HEADERS}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for status_code, response in operation.get("responses", {}).items():
                documented = response.setdefault("headers", {})
                documented.update(references)
                if status_code in RETRY_AFTER_STATUSES:
                    documented["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
    return result
