"""Change the verification thresholds (seed document 004's `update_thresholds`; reads are
`evolution.selectors.thresholds_get`).

Validation lives here, from `THRESHOLD_SPECS`; the API and the admin both call `thresholds_update`,
the only writer of the thresholds row.
"""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from evolution.models import THRESHOLD_SPECS, ThresholdChange, VerificationThresholds
from evolution.services.types import Thresholds


class ThresholdValidationError(ValueError):
    """`fields` maps each invalid threshold name to its messages."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items()))
        self.fields = fields


def _changes_clean(changes: Any) -> dict[str, float | int]:
    """Check names, types and ranges; return the values with their proper types.
    Booleans are not numbers here, and integer thresholds refuse fractions."""
    if not isinstance(changes, dict):
        raise ThresholdValidationError({"non_field_errors": ["Expected an object of threshold values."]})
    errors: dict[str, list[str]] = {}
    cleaned: dict[str, float | int] = {}
    for name, value in changes.items():
        spec = THRESHOLD_SPECS.get(name)
        if spec is None:
            errors[str(name)] = [f"Unknown threshold; expected one of {', '.join(THRESHOLD_SPECS)}."]
            continue
        kind, low, high = spec[0], spec[1], spec[2]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors[name] = ["Must be a number." if kind is float else "Must be an integer."]
            continue
        if kind is int and isinstance(value, float):
            if not value.is_integer():
                errors[name] = ["Must be an integer."]
                continue
            value = int(value)
        if value != value or not low <= value <= high:  # value != value: NaN
            errors[name] = [f"Must be between {low:g} and {high:g}."]
            continue
        cleaned[name] = kind(value)
    if errors:
        raise ThresholdValidationError(errors)
    return cleaned


def thresholds_update(
    *, changes: dict[str, Any], user: AbstractBaseUser | None = None, source: str = "code"
) -> Thresholds:
    """Apply a partial update (seed document 004's `update_thresholds({...})`); all or nothing. A change
    of at least one value is recorded as a `ThresholdChange` (who, when, old and new values)."""
    cleaned = _changes_clean(changes)
    with transaction.atomic():
        # A data migration stores the row; creating it here covers a database emptied since.
        row, _created = VerificationThresholds.objects.select_for_update().get_or_create(pk=1)
        diff = {
            name: {"old": getattr(row, name), "new": value}
            for name, value in cleaned.items()
            if getattr(row, name) != value
        }
        if diff:
            for name, value in cleaned.items():
                setattr(row, name, value)
            row.updated_by = user if user is not None and user.is_authenticated else None
            row.save()
            ThresholdChange.objects.create(thresholds=row, changed_by=row.updated_by, source=source, changes=diff)
    return Thresholds.from_row(row)
