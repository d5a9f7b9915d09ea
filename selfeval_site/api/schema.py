"""Shared OpenAPI pieces: the error envelope every endpoint may answer with."""

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

ERROR_RESPONSES = {
    400: OpenApiResponse(ERROR_ENVELOPE, description="Invalid input; `fields` names each invalid field"),
    401: OpenApiResponse(ERROR_ENVELOPE, description="Missing, invalid or revoked credentials"),
    403: OpenApiResponse(ERROR_ENVELOPE, description="Authenticated but not allowed"),
    404: OpenApiResponse(ERROR_ENVELOPE, description="Unknown, or not in the caller's project"),
    429: OpenApiResponse(ERROR_ENVELOPE, description="Rate limit of this client exceeded"),
}
