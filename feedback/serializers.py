"""Input and output shapes of the feedback API (camelCase; seed document 000's exact envelope)."""

from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType
from rest_framework import serializers

from core.api.fields import StrictRegexField
from diagnosis.models import Feedback


class FeedbackInput(msgspec.Struct, frozen=True, rename="camel"):
    """`POST /api/feedback`."""

    session_id: Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^\S+$")]
    feedback: Feedback
    comment: Annotated[str, Meta(max_length=5000)] = ""
    reviewer: Annotated[str, Meta(max_length=150)] = ""
    project: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=64,
                pattern=r"^[-a-zA-Z0-9_]+$",
                description="Staff only: the project slug when the sessionId exists in several projects.",
            ),
        ]
        | UnsetType
    ) = UNSET

    def __post_init__(self) -> None:
        # Text is kept trimmed, as the API's other text fields keep it.
        for name in ("session_id", "comment", "reviewer"):
            msgspec.structs.force_setattr(self, name, getattr(self, name).strip())


class FeedbackResponseSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()
    caseId = serializers.UUIDField(allow_null=True, help_text="The case of a useful answer; null for not_useful.")


class FeedbackErrorSerializer(serializers.Serializer):
    success = serializers.BooleanField(default=False)
    message = serializers.CharField(help_text="Names the problem, e.g. the invalid field and value.")


class FeedbackTokenInputSerializer(serializers.Serializer):
    """`POST /api/sessions/<sessionId>/feedback-token`."""

    endUserId = StrictRegexField(r"^\S+$", max_length=128, help_text="Your id of the end user who will vote.")


class FeedbackTokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Feedback-Token <token>` to POST /api/feedback.")
    expiresAt = serializers.DateTimeField(source="expires_at")
