"""Translatable labels for model fields and models declared without one.

The admin shows a field's `verbose_name`; a field declared without one gets its name ("root
cause"), which no catalogue can translate. Setting the labels here, at admin import, translates
every header, filter title and form label without touching the models: migrations read the
declared values (`Field._verbose_name`, `Meta.original_attrs`), which stay as they are.
"""

from django.db import models


def labels_install(
    model: type[models.Model],
    fields: dict[str, str],
    *,
    verbose_name: str | None = None,
    verbose_name_plural: str | None = None,
) -> None:
    """Set lazy-translated labels on `model`'s fields (and the model's own names when given)."""
    for name, label in fields.items():
        model._meta.get_field(name).verbose_name = label
    if verbose_name is not None:
        model._meta.verbose_name = verbose_name
    if verbose_name_plural is not None:
        model._meta.verbose_name_plural = verbose_name_plural
