"""django-filter pieces shared by the API's filter sets."""

import datetime as dt

import django_filters
from django import forms
from django_filters.fields import IsoDateTimeField


class UTCIsoDateTimeField(IsoDateTimeField):
    """An ISO 8601 date-time converted to UTC before it reaches SQL: any offset ISO allows
    (up to ±23:59) names one instant, and PostgreSQL accepts offsets only up to ±15:59."""

    default_error_messages = {"overflow": "Enter a date and time between the years 1 and 9999 in UTC."}

    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        try:
            return value.astimezone(dt.UTC)
        except OverflowError:
            raise forms.ValidationError(self.error_messages["overflow"], code="overflow") from None


class UTCIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCIsoDateTimeField


class BlankAsNullChoiceFilter(django_filters.ChoiceFilter):
    """A filter on a column whose unset value is "": the API calls that value null (as every answer
    does), so `?feedback=null` selects the sessions without feedback."""

    NULL = "null"

    def __init__(self, *, choices, **kwargs):
        super().__init__(choices=[*choices, (self.NULL, "null")], **kwargs)

    def filter(self, queryset, value):
        if value == self.NULL:
            return self.get_method(queryset)(**{self.field_name: ""})
        return super().filter(queryset, value)
