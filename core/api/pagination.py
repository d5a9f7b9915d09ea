"""Cursor pagination whose cursor is checked before it reaches SQL, and whose page size is
refused (400) when it is not what the schema says: an integer from 1 to the maximum."""

import datetime as dt

from django.core.exceptions import ValidationError
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination


class CheckedCursorPagination(CursorPagination):
    """DRF's cursor pagination, with the cursor's position parsed by the model field it is
    compared with: a crafted cursor (`p=notadate`, NUL, year 99999, a date that leaves the
    calendar in UTC) is an invalid cursor, the 404 DRF answers for a cursor it cannot decode,
    instead of an error of the database."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        """`pageSize`, else the default; `pageSize=null` or 500 is a 400, not the default (or the
        maximum) silently, as DRF answers."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        field = serializers.IntegerField(min_value=1, max_value=self.max_page_size)
        try:
            return field.run_validation(raw)
        except serializers.ValidationError as error:
            raise serializers.ValidationError({self.page_size_query_param: error.detail}) from None

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
        return parameters

    def paginate_queryset(self, queryset, request, view=None):
        self._position_field = queryset.model._meta.get_field(self.get_ordering(request, queryset, view)[0].lstrip("-"))
        return super().paginate_queryset(queryset, request, view)

    def decode_cursor(self, request) -> Cursor | None:
        cursor = super().decode_cursor(request)
        if cursor is None or cursor.position is None:
            return cursor
        try:
            value = self._position_field.to_python(cursor.position)
            if isinstance(value, dt.datetime):
                value = value.astimezone(dt.UTC).isoformat() if value.tzinfo else value.isoformat()
        except (ValidationError, OverflowError, ValueError):
            raise NotFound(self.invalid_cursor_message) from None
        return Cursor(offset=cursor.offset, reverse=cursor.reverse, position=value)
