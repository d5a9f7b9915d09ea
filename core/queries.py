"""A queryset built and compiled to SQL once, then run with other values: for a hot path only.

Building a queryset (clones, lookups resolved, subqueries) and compiling it cost more CPU than the
database takes to answer a lookup by an index: a third of a vote (issue 25). `CompiledQuery` keeps
the ORM's own SQL for each shape of a query (which of its values are given) and builds the model
instances from its rows as a queryset does (Django's ModelIterable: the database's converters,
`Model.from_db`, annotations as attributes). Given `update`, it is the UPDATE of those values with the
queryset's WHERE, returning the rows it would select (`UPDATE ... RETURNING`, on PostgreSQL and
SQLite alike): one statement that locks, writes and reads.
"""

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connections, models, router
from django.db.models.sql import InsertQuery, Query, UpdateQuery
from django.db.models.sql.compiler import SQLCompiler


@dataclass(frozen=True, slots=True)
class _Compiled:
    query: Query
    using: str
    sql: str
    params: tuple[Any, ...]  # the query's parameters, placeholders where the values go
    slots: tuple[tuple[int, str], ...]  # (position in params, placeholder name)
    columns: tuple[Any, ...]  # the selected expressions, whose converters turn values into Python's
    model_columns: slice  # the model's columns in a row, named by `field_names`
    field_names: tuple[str, ...]
    annotations: tuple[tuple[str, int], ...]  # (attribute, position in a row)


class CompiledQuery:
    """`build(**values)` returns a queryset; each shape (the names of the values that are not None)
    is built once, with placeholder values, compiled for the queryset's database, and run with the
    values of each call.

    A value must reach the SQL unchanged as one parameter: an int or a str compared as it is (a
    lookup that rewrites it, `contains` or `startswith`, makes compiling raise ValueError). The
    queryset's database must not depend on the request (a locking query: the primary).

    With `update` (field name to value or expression, as `QuerySet.update` takes them), `fetch` runs
    `UPDATE ... SET <update> WHERE <the queryset's WHERE> RETURNING <its columns>` and returns the
    rows as they are after it. An UPDATE takes no slice and locks what it matches: the queryset's
    slice is dropped (every row it matches is updated and returned) and it must not lock itself.
    """

    def __init__(self, build: Callable[..., models.QuerySet], *, update: Mapping[str, Any] | None = None) -> None:
        self._build = build
        self._update = update
        self._compiled: dict[tuple[str, ...], _Compiled] = {}
        self._lock = threading.Lock()

    def fetch(self, **values: int | str | None) -> list[models.Model]:
        """The instances the query finds for `values` (None: that value is not given)."""
        shape = tuple(sorted(name for name, value in values.items() if value is not None))
        compiled = self._compiled.get(shape)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.setdefault(shape, self._compile(values))
        params = list(compiled.params)
        for position, name in compiled.slots:
            params[position] = values[name]
        with connections[compiled.using].cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        compiler = compiled.query.get_compiler(using=compiled.using)
        converters = compiler.get_converters(compiled.columns)
        if converters:
            rows = compiler.apply_converters(rows, converters)
        model = compiled.query.model
        instances = []
        for row in rows:
            instance = model.from_db(compiled.using, compiled.field_names, row[compiled.model_columns])
            for attribute, position in compiled.annotations:
                setattr(instance, attribute, row[position])
            instances.append(instance)
        return instances

    def _compile(self, values: dict[str, int | str | None]) -> _Compiled:
        placeholders = {name: _placeholder(index, value) for index, (name, value) in enumerate(values.items())}
        queryset = self._build(**placeholders)
        if (
            queryset.query.select_related
            or queryset._prefetch_related_lookups
            or queryset._iterable_class is not models.query.ModelIterable
        ):
            raise ValueError("a compiled query loads instances of one model: no select_related, prefetch or values()")
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        if self._update is not None:
            sql, params = _update_returning(queryset, compiler, self._update)
        names = {placeholder: name for name, placeholder in placeholders.items() if placeholder is not None}
        slots = tuple(
            (position, names[param]) for position, param in enumerate(params) if _is_placeholder(param, names)
        )
        missing = set(names.values()) - {name for _, name in slots}
        if missing:
            raise ValueError(f"these values do not reach the SQL as parameters: {', '.join(sorted(missing))}")
        fields = compiler.klass_info["select_fields"]
        return _Compiled(
            query=queryset.query,
            using=queryset.db,
            sql=sql,
            params=tuple(params),
            slots=slots,
            columns=tuple(column for column, _, _ in compiler.select),
            model_columns=slice(fields[0], fields[-1] + 1),
            field_names=tuple(column.target.attname for column, _, _ in compiler.select[fields[0] : fields[-1] + 1]),
            annotations=tuple(compiler.annotation_col_map.items()),
        )


def _update_returning(
    queryset: models.QuerySet, compiler: SQLCompiler, values: Mapping[str, Any]
) -> tuple[str, tuple[Any, ...]]:
    """The UPDATE of `values` with `queryset`'s WHERE, returning the columns `compiler` (its SELECT's,
    compiled) selects: they name the table as the UPDATE does, so they read the updated row."""
    if queryset.query.select_for_update:
        raise ValueError("an UPDATE locks the rows it matches: build the queryset without select_for_update()")
    if not compiler.connection.features.can_return_rows_from_update:
        raise ValueError(f"database {queryset.db!r} cannot return rows from an UPDATE")
    query = queryset.query.chain(UpdateQuery)
    query.clear_limits()
    query.add_update_values(values)
    query.clear_select_clause()  # as QuerySet.update() does: the annotations are returned, not set
    update_sql, update_params = query.get_compiler(using=queryset.db).as_sql()
    returning = ", ".join(column_sql for _, (column_sql, _), _ in compiler.select)
    returning_params = [param for _, (_, column_params), _ in compiler.select for param in column_params]
    return f"{update_sql} RETURNING {returning}", (*update_params, *returning_params)


# Values no real call passes: a NUL cannot be stored in text, ids are positive. The LIKE wildcards
# and the backslash make any escaping of a pattern lookup change the string, so it is not found.
def _placeholder(index: int, value: int | str | None) -> int | str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"a compiled query takes ints and strs, not {type(value).__name__}")
    return -(2**62) - index if isinstance(value, int) else f"\x00%_\\placeholder-{index}\x00"


def _is_placeholder(param: Any, names: dict[Any, str]) -> bool:
    return type(param) in (int, str) and param in names


class CompiledInsert:
    """`model.objects.create(**values)` with its INSERT compiled once per database.

    The fields' `pre_save` runs as in `Model.save` (auto_now_add stamps the row) and the primary
    key comes back with the INSERT (RETURNING, on PostgreSQL and SQLite alike); unlike `save`, no
    `pre_save` / `post_save` signal is sent: for a model no receiver listens to (the test says so).
    """

    def __init__(self, model: type[models.Model]) -> None:
        self.model = model
        self._fields = [
            field
            for field in model._meta.local_concrete_fields
            if not field.generated and field is not model._meta.auto_field
        ]
        self._compiled: dict[str, tuple[str, tuple[Any, ...]]] = {}

    def create(self, **values: Any) -> models.Model:
        instance = self.model(**values)
        using = router.db_for_write(self.model, instance=instance)
        connection = connections[using]
        compiled = self._compiled.get(using)
        if compiled is None:
            compiled = self._compiled.setdefault(using, self._compile(instance, using))
        sql, returning_params = compiled
        params = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in self._fields]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            (returned,) = connection.ops.fetch_returned_rows(cursor, returning_params)
        for field, value in zip(self.model._meta.db_returning_fields, returned, strict=True):
            setattr(instance, field.attname, value)
        instance._state.adding = False
        instance._state.db = using
        return instance

    def _compile(self, instance: models.Model, using: str) -> tuple[str, tuple[Any, ...]]:
        if not connections[using].features.can_return_columns_from_insert:
            raise ValueError(f"database {using!r} cannot return the primary key from an INSERT")
        query = InsertQuery(self.model)
        query.insert_values(self._fields, [instance])
        compiler = query.get_compiler(using=using)
        compiler.returning_fields = self.model._meta.db_returning_fields
        if compiler.get_converters([field.get_col(self.model._meta.db_table) for field in compiler.returning_fields]):
            raise ValueError("the returned columns need converters")
        ((sql, params),) = compiler.as_sql()
        if len(params) != len(self._fields):
            raise ValueError("every field must be one parameter of the INSERT")
        return sql, tuple(compiler.returning_params)
