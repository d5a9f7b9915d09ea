"""Cursor pagination whose cursor is checked before it reaches SQL, and whose page size is
refused (400) when it is not what the schema says: an integer from 1 to the maximum."""

import datetime as dt
from urllib.parse import parse_qs, urlsplit

from django.core.exceptions import ValidationError
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.response import Response


class CheckedCursorPagination(CursorPagination):
    """DRF's cursor pagination, with the cursor's position parsed by the model field it is
    compared with: a crafted cursor (`p=notadate`, NUL, year 99999, a date that leaves the
    calendar in UTC) is an invalid cursor, the 404 DRF answers for a cursor it cannot decode,
    instead of an error of the database.

    A page carries `cursor` beside `next`: the next page's `?cursor=` value, so a client pages
    without taking the `next` URL apart (null on the last page).
    """

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

    def get_paginated_response(self, data) -> Response:
        following = self.get_next_link()
        return Response(
            {
                "next": following,
                "previous": self.get_previous_link(),
                "cursor": parse_qs(urlsplit(following).query)[self.cursor_query_param][0] if following else None,
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        link = {"type": ["string", "null"], "format": "uri"}
        return {
            "type": "object",
            "required": ["next", "previous", "cursor", "results"],
            "properties": {
                "next": {**link, "description": "the next page, null on the last one"},
                "previous": {**link, "description": "the previous page, null on the first one"},
                "cursor": {
                    "type": ["string", "null"],
                    "description": f"send it as `?{self.cursor_query_param}=` for the next page (the cursor of `next`); "
                    "null on the last page",
                },
                "results": schema,
            },
        }
