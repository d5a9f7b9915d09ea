"""django-filter pieces shared by the API's filter sets."""

import datetime as dt
import difflib
from collections.abc import Iterable

import django_filters
from django import forms
from django_filters.fields import IsoDateTimeField
from drf_spectacular.utils import extend_schema_field
from rest_framework.request import Request
from rest_framework.settings import api_settings

from core.api.errors import ApplicationError


class APIFilterSet(django_filters.FilterSet):
    """The API's filter sets: a parameter given empty (`?status=`, `?createdAfter=`) is a 400 as the
    schema says (an enum, an integer or a date-time is never ""), not a filter silently left out, as
    django-filter treats an HTML form's empty field. Free text (a CharFilter) may be empty."""

    def is_valid(self) -> bool:
        valid = super().is_valid()
        for name, field_filter in self.filters.items():
            if not isinstance(field_filter, django_filters.CharFilter) and self.data.get(name) == "":
                self.form.add_error(name, forms.ValidationError("This field may not be blank.", code="blank"))
                valid = False
        return valid


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


class BoundedIntegerFilter(django_filters.NumberFilter):
    """An integer from `min_value` to `max_value` (else a 400), with both bounds in the OpenAPI
    schema (`minimum`, `maximum`): a generated client refuses what the server refuses."""

    field_class = forms.IntegerField

    def __init__(self, *, min_value: int, max_value: int, **kwargs) -> None:
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)
        extend_schema_field({"type": "integer", "minimum": min_value, "maximum": max_value})(self)


class KnownQueryParametersMixin:
    """A list view that refuses a query parameter it does not read: a misspelt or snake_case filter
    (`verifier_verdict=PASS` for `verifierVerdict`) is a 400 naming it, never a silently unfiltered list.

    The list reads its filter set's filters, `list_query_parameters` (a search serializer's fields),
    its paginator's cursor and page size, and DRF's format override.
    """

    list_query_parameters: tuple[str, ...] = ()

    def list(self, request: Request, *args, **kwargs):
        query_parameters_check(request=request, known=self._known_query_parameters())
        return super().list(request, *args, **kwargs)

    def _known_query_parameters(self) -> set[str]:
        known = {*self.list_query_parameters, api_settings.URL_FORMAT_OVERRIDE}
        filterset = getattr(self, "filterset_class", None)
        if filterset is not None:
            known.update(filterset.base_filters)
        paginator = self.paginator
        if paginator is not None:
            known.update(
                name
                for name in (getattr(paginator, "cursor_query_param", None), paginator.page_size_query_param)
                if name
            )
        return known - {None}


def query_parameters_check(*, request: Request, known: Iterable[str]) -> None:
    """ApplicationError (400) naming each query parameter of the request that is not `known`, with
    the closest known name when there is one."""
    known = sorted(known)
    unknown = sorted(set(request.query_params) - set(known))
    if not unknown:
        return
    fields = {}
    for name in unknown:
        close = difflib.get_close_matches(name.replace("_", ""), known, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]}?" if close else ""
        fields[name] = [f"Unknown query parameter.{hint} Known: {', '.join(known)}."]
    raise ApplicationError(f"Unknown query parameter: {', '.join(unknown)}", code="unknown_parameter", fields=fields)
