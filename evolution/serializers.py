"""Input and output shapes of the evolution API. Requests are camelCase; the result keeps seed
document 004's `VerificationResult.to_dict()` keys and the thresholds keep its names."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import StrictCharField
from evolution.models import THRESHOLD_SPECS, VerificationThresholds
from evolution.services.messages import LANGUAGES

MAX_QUERY_CHARS = 20_000
MAX_ANSWER_CHARS = 200_000


class StrictFloatField(serializers.FloatField):
    """A number, never a string or a boolean that merely looks like one."""

    default_error_messages = {"invalid": "Must be a number."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class UserFeedbackSerializer(serializers.Serializer):
    satisfaction = StrictFloatField(min_value=0.0, max_value=5.0)
    comments = StrictCharField(required=False, allow_blank=True, allow_null=True, max_length=5_000, default="")


class VerifyRequestSerializer(serializers.Serializer):
    """`POST /api/evolution/verify`."""

    query = StrictCharField(max_length=MAX_QUERY_CHARS)
    oldResponse = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=MAX_ANSWER_CHARS)
    newResponse = StrictCharField(trim_whitespace=False, max_length=MAX_ANSWER_CHARS)
    userFeedback = UserFeedbackSerializer(required=False, allow_null=True, default=None)
    lang = serializers.ChoiceField(
        choices=LANGUAGES, required=False, help_text="Language of reasons and suggestions; else Accept-Language."
    )
    compareCompetitors = StrictBooleanField(required=False, default=True)


class VerificationResultSerializer(serializers.Serializer):
    """Seed document 004's `VerificationResult.to_dict()`; `metrics` has one object per dimension."""

    is_valid = serializers.BooleanField()
    confidence = serializers.FloatField()
    reasons = serializers.ListField(child=serializers.CharField())
    suggestions = serializers.ListField(child=serializers.CharField())
    metrics = serializers.DictField()


class ThresholdValuesSerializer(serializers.Serializer):
    """The six thresholds of seed document 004's table (for the schema; values are validated by the service)."""

    min_confidence = serializers.FloatField(required=False)
    min_improvement_ratio = serializers.FloatField(required=False)
    min_length = serializers.IntegerField(required=False)
    min_user_satisfaction = serializers.FloatField(required=False)
    max_competitor_rank = serializers.IntegerField(required=False)
    min_structure_score = serializers.FloatField(required=False)


@extend_schema_field(ThresholdValuesSerializer)
class ThresholdValuesField(serializers.DictField):
    """Names, types and ranges are checked by `thresholds_update`, the one place that knows them."""


class ThresholdsUpdateSerializer(serializers.Serializer):
    """`PUT /api/evolution/thresholds`: any subset of the thresholds; the others keep their values."""

    thresholds = ThresholdValuesField()


class ThresholdsSerializer(serializers.ModelSerializer):
    thresholds = serializers.SerializerMethodField()
    updatedAt = serializers.DateTimeField(
        source="updated_at", allow_null=True, help_text="null: seed document 004's defaults, never changed"
    )
    updatedBy = serializers.SlugRelatedField(
        source="updated_by", slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = VerificationThresholds
        fields = ["thresholds", "updatedAt", "updatedBy"]

    @extend_schema_field(ThresholdValuesSerializer)
    def get_thresholds(self, row: VerificationThresholds) -> dict[str, float | int]:
        return {name: getattr(row, name) for name in THRESHOLD_SPECS}
