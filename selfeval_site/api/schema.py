"""Shared OpenAPI pieces: the error envelope every endpoint may answer with."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
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


class ProjectAPIKeyScheme(OpenApiAuthenticationExtension):
    target_class = "selfeval_site.api.authentication.ProjectAPIKeyAuthentication"
    name = "ProjectApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>`: a per-project key created with `manage.py create_api_key`.",
        }
