"""Bulk row writers: Django's bulk_create everywhere, PostgreSQL COPY where it is available.

A writer takes rows as dicts keyed by field attname (`project_id`, `session_id`, ...) and
returns their primary keys in order, so children can point at parents inserted a moment ago.
"""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models
from django.utils import timezone

_REQUIRED = object()  # no default: every row must carry the value


class RowWriter(Protocol):
    def insert(self, model: type[models.Model], rows: Sequence[dict[str, Any]]) -> list[int]: ...


class OrmWriter:
    """Portable: model instances through bulk_create (pks come back via RETURNING)."""

    def __init__(self, batch_size: int = 2000):
        self.batch_size = batch_size

    def insert(self, model: type[models.Model], rows: Sequence[dict[str, Any]]) -> list[int]:
        objects = [model(**row) for row in rows]
        model.objects.bulk_create(objects, batch_size=self.batch_size)
        return [obj.pk for obj in objects]


class CopyWriter:
    """PostgreSQL only: ids reserved from the table's sequence, rows streamed with COPY.

    Roughly five times faster than bulk_create for millions of rows; fields absent from a row
    get the model default (auto_now fields: now). Generated columns are left to the database.
    """

    def __init__(self) -> None:
        self._columns: dict[type[models.Model], list[tuple[str, str, Any]]] = {}
        self._now = timezone.now()

    def _fields(self, model: type[models.Model]) -> list[tuple[str, str, Any]]:
        if model not in self._columns:
            fields = []
            for field in model._meta.concrete_fields:
                if field.primary_key or getattr(field, "generated", False):
                    continue
                fields.append((field.attname, field.column, field))
            self._columns[model] = fields
        return self._columns[model]

    def insert(self, model: type[models.Model], rows: Sequence[dict[str, Any]]) -> list[int]:
        if not rows:
            return []
        table = model._meta.db_table
        pk_column = model._meta.pk.column
        fields = self._fields(model)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [table, pk_column, len(rows)],
            )
            ids = [row[0] for row in cursor.fetchall()]
            defaults = {attname: self._default(field) for attname, _, field in fields}
            json_fields = {attname for attname, _, field in fields if isinstance(field, models.JSONField)}
            quote = connection.ops.quote_name
            columns = ", ".join(quote(c) for c in [pk_column, *(column for _, column, _ in fields)])
            attnames = [attname for attname, _, _ in fields]
            with cursor.cursor.copy(f"COPY {quote(table)} ({columns}) FROM STDIN") as copy:  # noqa: S608 (names from _meta)
                for pk, row in zip(ids, rows, strict=True):
                    values: list[Any] = [pk]
                    for attname in attnames:
                        value = row[attname] if attname in row else defaults[attname]
                        if value is _REQUIRED:
                            raise ValueError(f"{model.__name__}.{attname} needs a value")
                        if attname in json_fields and value is not None:
                            value = json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)
                        values.append(value)
                    copy.write_row(values)
        return ids

    def _default(self, field: models.Field) -> Any:
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            return self._now
        if field.has_default():
            return field.get_default()
        if field.null:
            return None
        if isinstance(field, (models.CharField, models.TextField)):
            return ""
        return _REQUIRED


def row_writer(*, prefer_copy: bool = True) -> RowWriter:
    if prefer_copy and connection.vendor == "postgresql":
        return CopyWriter()
    return OrmWriter()


def as_aware(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
