"""Shared OpenAPI pieces: the error envelope, the error statuses each kind of operation really
answers, and the schema's post-processing.

`Content-Encoding` is not a parameter of the operations: it says how the body is transported
(gzip or deflate, or none), not what it means, and a schema-driven client or fuzzer that picks
`deflate` from an enum sends a body that is not deflated. The API's description says it instead."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

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
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return schema if self.target.allow_blank else {**schema, "pattern": r"\S"}


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
