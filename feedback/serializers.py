"""Input and output shapes of the feedback API (camelCase; seed document 000's exact envelope)."""

from rest_framework import serializers

from core.api.fields import StrictCharField, StrictRegexField
from diagnosis.models import Feedback


class StrictChoiceField(serializers.ChoiceField):
    """A ChoiceField that names the allowed values and refuses non-strings."""

    default_error_messages = {"invalid_choice": "{input!r} is not one of: useful, not_useful."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class FeedbackInputSerializer(serializers.Serializer):
    """`POST /api/feedback`."""

    sessionId = StrictRegexField(r"^\S+$", max_length=128)
    feedback = StrictChoiceField(choices=Feedback.choices)
    comment = StrictCharField(required=False, allow_blank=True, default="", max_length=5000)
    reviewer = StrictCharField(required=False, allow_blank=True, default="", max_length=150)
    project = StrictRegexField(
        r"^[-a-zA-Z0-9_]+$",
        max_length=64,
        required=False,
        default=None,
        help_text="Staff only: the project slug when the sessionId exists in several projects.",
    )


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
