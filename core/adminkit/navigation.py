"""Decide and move on: the object after the current one in the change list the user came from."""

import copy

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.db.models import Model, Q
from django.http import HttpRequest, QueryDict
from django.urls import reverse

from core.adminkit.sequence import rows_after


def changelist_next(*, model_admin, request: HttpRequest, obj: Model, condition: Q) -> Model | None:
    """The first object matching `condition` after `obj` in the change list the user came from.

    The list is the one named by the change form's `_changelist_filters` (its filters, search and
    sort order, scoped as the list is; `sequence.rows_after` walks its order); after the last
    object it wraps to the first. `obj` itself is never returned: None when no other object
    matches. Costs the list's own queries (its filters' choices, its capped count) and one or two
    more: run it after a save, not on every page view.
    """
    listing = copy.copy(request)
    listing.GET = QueryDict(request.GET.get("_changelist_filters", ""))
    try:
        queryset = model_admin.get_changelist_instance(listing).queryset
    except IncorrectLookupParameters:
        queryset = model_admin.get_queryset(request)
    candidates = queryset.filter(condition).exclude(pk=obj.pk)
    after = rows_after(candidates, obj)
    following = after.first() if after is not None else None
    return following if following is not None else candidates.first()


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
