"""Decide and move on: the object after the current one in the change list the user came from."""

import copy

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.db.models import Model, Q
from django.http import HttpRequest, QueryDict
from django.urls import reverse


def changelist_next(*, model_admin, request: HttpRequest, obj: Model, condition: Q) -> Model | None:
    """The first object matching `condition` after `obj` in the change list the user came from.

    The list is the one named by the change form's `_changelist_filters` (its filters, search and
    sort order, scoped as the list is); after the last object it wraps to the first. `obj` itself
    is never returned: None when no other object matches. Costs the list's own queries (its filters'
    choices, its capped count) and two or three more; run it after a save, not on every page view.
    """
    listing = copy.copy(request)
    listing.GET = QueryDict(request.GET.get("_changelist_filters", ""))
    try:
        changelist = model_admin.get_changelist_instance(listing)
        queryset = changelist.queryset
        ordering = changelist.get_ordering(listing, queryset)
    except IncorrectLookupParameters:
        queryset = model_admin.get_queryset(request)
        ordering = [*(queryset.query.order_by or model_admin.model._meta.ordering), "-pk"]
    candidates = queryset.filter(condition).exclude(pk=obj.pk)
    after = _after(model_admin.model, obj, ordering)
    if after is not None:
        found = candidates.filter(after).first()
        if found is not None:
            return found
    return candidates.first()


def _after(model: type[Model], obj: Model, ordering: list) -> Q | None:
    """Rows after `obj` in `ordering` (keyset); None when the order is not plain field names or a
    value is NULL (then the caller starts from the top of the list)."""
    if not ordering or not all(isinstance(term, str) for term in ordering):
        return None
    terms = [(term.lstrip("-"), term.startswith("-")) for term in ordering if term.lstrip("-") != "?"]
    values = model._default_manager.filter(pk=obj.pk).values(*(name for name, _desc in terms)).first()
    if values is None or any(value is None for value in values.values()):
        return None
    after, equal = Q(), Q()
    for name, descending in terms:
        after |= equal & Q(**{f"{name}__{'lt' if descending else 'gt'}": values[name]})
        equal &= Q(**{name: values[name]})
    return after


def changelist_url(model_admin, request) -> str:
    """The change list the user came from, with its filters."""
    return _with_filters(model_admin, request, f"admin:{_names(model_admin)}_changelist")


def change_url(model_admin, request, obj) -> str:
    """`obj`'s change form, keeping the change list the user came from."""
    return _with_filters(model_admin, request, f"admin:{_names(model_admin)}_change", obj.pk)


def _names(model_admin) -> str:
    return f"{model_admin.opts.app_label}_{model_admin.opts.model_name}"


def _with_filters(model_admin, request, name: str, *args) -> str:
    # Django's own re-encoding of the preserved filters (what its "Save" redirects use).
    url = reverse(name, args=args, current_app=model_admin.admin_site.name)
    context = {"preserved_filters": model_admin.get_preserved_filters(request), "opts": model_admin.opts}
    return add_preserved_filters(context, url)
