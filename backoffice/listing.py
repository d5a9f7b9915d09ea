"""The list the inspector was opened from: the triage queue or the session list, with its filters.

A list's rows link to the inspector with `_list` (which list) and Django's `_changelist_filters`
(its query string). The inspector rebuilds that list's queryset through the list's own admin
(filters, search, sort order, access) without reading its page, finds the session's place in it
(`adminkit.sequence.list_place`) and links the previous and next rows with the same context.
"""

import copy
from dataclasses import dataclass

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import PAGE_VAR, ChangeList
from django.http import HttpRequest, QueryDict
from django.urls import reverse
from django.utils.http import urlencode

from core.adminkit.sequence import ListPlace, list_place

LIST_VAR = "_list"
# The inspector counts a list's rows, and those before this one, up to here ("1,000+"): past it a
# count costs more than the page's budget on a big queue, and says no more to a reviewer.
PLACE_COUNT_CAP = 1000
FILTERS_VAR = "_changelist_filters"
INSPECTOR = "admin:diagnosis_diagnosissession_change"


def inspector_url(pk: int, *, list_key: str = "", filters: str = "") -> str:
    url = reverse(INSPECTOR, args=[pk])
    params = {LIST_VAR: list_key, FILTERS_VAR: filters} if list_key else {}
    params = {name: value for name, value in params.items() if value}
    return f"{url}?{urlencode(params)}" if params else url


class InspectorChangeList(ChangeList):
    """A session list whose rows open the inspector, saying which list they come from.

    Built for `list_context_get` (request attribute `list_place_only`), it skips the page and its
    count: the inspector needs only the filtered, ordered queryset.
    """

    def get_results(self, request):
        if getattr(request, "list_place_only", False):
            self.result_count, self.result_list = 0, self.queryset.none()
            return
        super().get_results(request)

    def url_for_result(self, result) -> str:
        # The list's own filters are added to this link by the admin (preserved filters).
        return inspector_url(result.pk, list_key=self.model_admin.list_key)


class InspectorListMixin:
    """For the admins whose changelist rows are sessions opened in the inspector."""

    list_key = ""  # the value of `_list` naming this list
    list_label = ""  # its name in the inspector's breadcrumb

    def get_changelist(self, request, **kwargs):
        return InspectorChangeList


@dataclass(frozen=True)
class ListContext:
    key: str
    label: str
    list_url: str  # the list with its filters, on the page that holds this session
    filtered: bool
    place: ListPlace | None
    filters: str  # the query string carried from row to row
    previous_url: str
    next_url: str

    @property
    def position_label(self) -> str:
        if self.place is None or self.place.position is None:
            return "—"
        return f"{self.place.position:,}" if self.place.position_exact else f"{self.place.cap:,}+"

    @property
    def total_label(self) -> str:
        if self.place is None:
            return "—"
        return f"{self.place.cap:,}+" if self.place.capped else f"{self.place.total:,}"


def _filters_on_page(filters: QueryDict, *, position: int | None, per_page: int) -> str:
    """The list's query string on the page holding `position` (an exact one), else as it came."""
    params = filters.copy()
    if position is None:
        return params.urlencode()
    params.pop(PAGE_VAR, None)
    page = (position - 1) // per_page + 1
    if page > 1:
        params[PAGE_VAR] = str(page)
    return params.urlencode()


def list_context_get(*, request: HttpRequest, params: QueryDict, admins: dict, session) -> ListContext | None:
    """The list named by `params` (`_list`, `_changelist_filters`: the inspector's query string or
    the review form's hidden fields) and `session`'s place in it; None when no known list is named.

    `admins` maps each list key to its ModelAdmin. A list whose filters no longer apply (a bad
    lookup) keeps its link but has no place.
    """
    key = params.get(LIST_VAR, "")
    model_admin = admins.get(key)
    if model_admin is None:
        return None
    raw_filters = params.get(FILTERS_VAR, "")
    filters = QueryDict(raw_filters)
    list_request = copy.copy(request)
    list_request.GET = filters
    list_request.list_place_only = True
    try:
        changelist = model_admin.get_changelist_instance(list_request)
    except IncorrectLookupParameters:
        place = None
    else:
        place = list_place(changelist.queryset, session, cap=PLACE_COUNT_CAP)
    changelist_url = reverse(f"admin:{model_admin.opts.app_label}_{model_admin.opts.model_name}_changelist")
    on_page = _filters_on_page(
        filters,
        position=place.position if place and place.position_exact else None,
        per_page=model_admin.list_per_page,
    )
    carried = filters.copy()
    carried.pop(PAGE_VAR, None)
    carry = carried.urlencode()
    shown = {name for name in filters if name != PAGE_VAR}
    return ListContext(
        key=key,
        label=str(model_admin.list_label),
        list_url=f"{changelist_url}?{on_page}" if on_page else changelist_url,
        filtered=bool(shown),
        place=place,
        filters=carry,
        previous_url=inspector_url(place.previous_pk, list_key=key, filters=carry)
        if place and place.previous_pk
        else "",
        next_url=inspector_url(place.next_pk, list_key=key, filters=carry) if place and place.next_pk else "",
    )
