"""Paging for tables too big to count: counts stop at a cap, so no page ever runs a full COUNT(*)."""

from functools import cached_property

from django.core.paginator import Paginator
from django.db.models import QuerySet

COUNT_CAP = 10_000


def capped_count(queryset: QuerySet, cap: int = COUNT_CAP) -> int:
    """min(count, cap + 1): the database stops counting after cap + 1 rows (a LIMITed subquery)."""
    return queryset.order_by()[: cap + 1].count()


class CappedCountPaginator(Paginator):
    """A Paginator whose `count` is capped at COUNT_CAP + 1 rows.

    On a million sessions an exact count of a filtered list costs seconds; the first
    COUNT_CAP rows of an index range cost milliseconds. Pages past the cap are not offered:
    a reviewer narrows the filters instead. `is_capped` tells the template to say "10,000+".
    """

    cap = COUNT_CAP

    @cached_property
    def count(self) -> int:
        return capped_count(self.object_list, self.cap)

    @property
    def is_capped(self) -> bool:
        return self.count > self.cap
