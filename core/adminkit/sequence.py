"""Where a row sits in an ordered admin list, and its neighbours, without reading the list.

A keyset walk: "the next row" is the first row ordered after this one's sort values, so each
neighbour is one indexed `LIMIT 1` query, and the position is a capped count of the rows before
it. NULLs sort where the database puts them (`nulls_order_largest`), as the list itself does.
"""

from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.db import connections
from django.db.models import F, Model, OrderBy, Q, QuerySet
from django.db.models.constants import LOOKUP_SEP

from core.adminkit.paging import COUNT_CAP, capped_count


@dataclass(frozen=True)
class SortKey:
    name: str  # a concrete column of the model ("pk" for the primary key)
    descending: bool
    nullable: bool


@dataclass(frozen=True)
class ListPlace:
    """`position` is 1-based and None when the row is not (or no longer) in the list; counts stop
    past `cap` (`cap + 1` or more means "more than cap")."""

    position: int | None
    total: int
    cap: int
    previous_pk: int | None
    next_pk: int | None

    @property
    def capped(self) -> bool:
        return self.total > self.cap

    @property
    def position_exact(self) -> bool:
        return self.position is not None and self.position <= self.cap


def sort_keys(queryset: QuerySet) -> list[SortKey] | None:
    """The queryset's ordering as plain columns, the primary key last; None when a term is an
    expression, a relation's ordering or random, which a keyset cannot follow."""
    opts = queryset.model._meta
    terms = list(queryset.query.order_by or opts.ordering)
    keys: list[SortKey] = []
    for term in terms:
        if isinstance(term, OrderBy) and isinstance(term.expression, F) and term.nulls_first is term.nulls_last:
            name, descending = term.expression.name, term.descending
        elif isinstance(term, str) and term != "?":
            name, descending = term.removeprefix("-"), term.startswith("-")
        else:
            return None
        if name == "pk" or name == opts.pk.name:
            keys.append(SortKey("pk", descending, False))
            break  # the primary key orders completely: later terms never apply
        if LOOKUP_SEP in name:
            return None
        try:
            field = opts.get_field(name)
        except Exception:  # noqa: BLE001 - an unknown name: not a column we can follow
            return None
        if not field.concrete or (field.is_relation and field.related_model._meta.ordering):
            return None
        keys.append(SortKey(field.attname, descending, field.null))
    if not keys or keys[-1].name != "pk":
        keys.append(SortKey("pk", False, False))
    return keys


def _beyond(key: SortKey, value, *, nulls_largest: bool) -> Q | None:
    """Rows whose `key` sorts strictly after `value`; None when none can."""
    nulls_last = nulls_largest != key.descending
    if value is None:
        return None if nulls_last else Q(**{f"{key.name}__isnull": False})
    condition = Q(**{f"{key.name}__{'lt' if key.descending else 'gt'}": value})
    if key.nullable and nulls_last:
        condition |= Q(**{f"{key.name}__isnull": True})
    return condition


def _after(keys: list[SortKey], values: list, *, nulls_largest: bool) -> Q | None:
    """Rows ordered strictly after the row with these sort values."""
    alternatives, equal = [], Q()
    for key, value in zip(keys, values, strict=True):
        beyond = _beyond(key, value, nulls_largest=nulls_largest)
        if beyond is not None:
            alternatives.append(equal & beyond)
        equal &= Q(**{f"{key.name}__isnull": True}) if value is None else Q(**{key.name: value})
    return reduce(or_, alternatives) if alternatives else None


def _segments(keys: list[SortKey], values: list, *, nulls_largest: bool, here: Q | None = None) -> list[Q]:
    """The rows after this one as disjoint conditions in list order, each a plain range (or IS NULL)
    on the first sort key, so the database reads only from this row onwards. One OR over every
    key would give it no range: it would walk the index from the list's start, or scan the table.

    The first segment holds `here` (this row itself) too. NULLs of the first key are a segment
    of their own.
    """
    first, value = keys[0], values[0]
    tail = _after(keys[1:], values[1:], nulls_largest=nulls_largest) if len(keys) > 1 else None
    equal = Q(**{f"{first.name}__isnull": True}) if value is None else Q(**{first.name: value})
    same = [condition for condition in (here, tail) if condition is not None]
    nulls_last = nulls_largest != first.descending
    if value is None:
        segments = [equal & reduce(or_, same)] if same else []
        if not nulls_last:
            segments.append(Q(**{f"{first.name}__isnull": False}))
        return segments
    direction = "l" if first.descending else "g"
    beyond = Q(**{f"{first.name}__{direction}t": value})
    # The range (>= value) is implied by the OR; stated, it bounds the index scan.
    segments = [
        Q(**{f"{first.name}__{direction}te": value}) & ((equal & reduce(or_, same)) | beyond if same else beyond)
    ]
    if first.nullable and nulls_last:
        segments.append(Q(**{f"{first.name}__isnull": True}))
    return segments


def _first(rows: QuerySet, segments: list[Q], count: int) -> list:
    """The first `count` rows of the segments, in order: a segment is read only if needed."""
    found: list = []
    for segment in segments:
        found += list(rows.filter(segment)[: count - len(found)])
        if len(found) >= count:
            break
    return found


def _counted(rows: QuerySet, segments: list[Q], cap: int) -> int:
    total = 0
    for segment in segments:
        total += capped_count(rows.filter(segment), cap - total)
        if total > cap:
            break
    return total


def _reversed(keys: list[SortKey]) -> list[SortKey]:
    return [SortKey(key.name, not key.descending, key.nullable) for key in keys]


def _order(keys: list[SortKey]) -> list[str]:
    return [f"{'-' if key.descending else ''}{key.name}" for key in keys]


def list_place(queryset: QuerySet, obj: Model, *, cap: int = COUNT_CAP) -> ListPlace | None:
    """Where `obj` sits in `queryset` (filtered and ordered as a list shows it): a few small
    queries, each reading from this row onwards (more only where NULLs start a new segment).

    None when the ordering cannot be followed (see `sort_keys`).
    """
    keys = sort_keys(queryset)
    if keys is None:
        return None
    values = [obj.pk if key.name == "pk" else getattr(obj, key.name) for key in keys]
    nulls_largest = connections[queryset.db].features.nulls_order_largest
    rows = queryset.order_by(*_order(keys)).values_list("pk", flat=True)
    backwards = rows.order_by(*_order(_reversed(keys)))
    # The row itself and the one after it: the first tells whether it is in the list.
    here_and_next = _first(rows, _segments(keys, values, nulls_largest=nulls_largest, here=Q(pk=obj.pk)), 2)
    in_list = bool(here_and_next) and here_and_next[0] == obj.pk
    following = here_and_next[1:] if in_list else here_and_next[:1]
    before = _segments(_reversed(keys), values, nulls_largest=nulls_largest)
    previous = _first(backwards, before, 1)
    total = capped_count(queryset, cap)
    position = _counted(backwards, before, cap) + 1 if in_list else None
    return ListPlace(
        position=position,
        total=total,
        cap=cap,
        previous_pk=previous[0] if previous else None,
        next_pk=following[0] if following else None,
    )


def rows_after(queryset: QuerySet, obj: Model) -> QuerySet | None:
    """The rows of `queryset` ordered after `obj` (keyset, no query of its own), in that order;
    None when the ordering cannot be followed (see `sort_keys`)."""
    keys = sort_keys(queryset)
    if keys is None:
        return None
    values = [obj.pk if key.name == "pk" else getattr(obj, key.name) for key in keys]
    after = _after(keys, values, nulls_largest=connections[queryset.db].features.nulls_order_largest)
    rows = queryset.order_by(*_order(keys))
    return rows.filter(after) if after is not None else rows.none()
