from typing import Any

from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations
from rest_framework import serializers

# A character that is not whitespace to Python's str.strip(), which DRF trims with: JSON Schema's
# \S (ECMA's) also lets the separators \x1c-\x1f and NEL (\x85) through, which Python strips.
NOT_BLANK_PATTERN = r"[^\s\u001c-\u001f\u0085]"


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of silently turning them into text, and,
    unless `allow_blank`, text of whitespace only, whether or not it trims it (the schema says so:
    `NOT_BLANK_PATTERN`, core/api/schema.py)."""

    default_error_messages = {"invalid": "Must be a string."}

    def run_validation(self, data: Any = serializers.empty) -> Any:
        if isinstance(data, str) and data and not data.strip() and not self.allow_blank:
            self.fail("blank")
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictRegexField(serializers.RegexField):
    default_error_messages = {"invalid": "Must be a string without whitespace."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ColumnIntegerField(serializers.IntegerField):
    """An integer bounded by the range of the model column it is stored in.

    The range is the portable one Django knows for the column type (PostgreSQL's `integer` for a
    PositiveIntegerField: 0..2^31-1), checked the same on SQLite, which would hold more.
    """

    def __init__(self, *, column: models.Field, **kwargs: Any) -> None:
        low, high = BaseDatabaseOperations.integer_field_ranges[column.get_internal_type()]
        kwargs.setdefault("min_value", low)
        kwargs.setdefault("max_value", high)
        super().__init__(**kwargs)


class BoundedListField(serializers.ListField):
    """A ListField that refuses an over-long list before validating a single item.

    DRF validates every item first and checks `max_length` afterwards: 320,000 items for a
    limit of 200 cost seconds of serializer work just to be refused.
    """

    def to_internal_value(self, data: Any) -> list[Any]:
        if self.max_length is not None and isinstance(data, list) and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class BlankAsNullChoiceField(serializers.ChoiceField):
    """An output enum whose unset value is null: the column stores "" (no feedback, not evaluated
    yet), the API says null, the same in every answer and in the schema (the enum or null)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> Any:
        return value or None


class BlankAsNullCharField(serializers.CharField):
    """Output text whose unset value is null: the column stores "", the API says null."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> Any:
        return value or None
