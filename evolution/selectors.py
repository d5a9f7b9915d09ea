"""Reads of the evolution app.

The thresholds row (pk 1) is stored by a data migration and written only by
`evolution.services.thresholds.thresholds_update`. Reading never writes: should the row be missing
(a database emptied since it was migrated), an unsaved row of seed document 004's defaults stands in.
"""

from evolution.models import VerificationThresholds
from evolution.services.types import Thresholds


def thresholds_current() -> VerificationThresholds:
    """The stored thresholds row with who changed it last."""
    return VerificationThresholds.objects.select_related("updated_by").filter(pk=1).first() or VerificationThresholds()


def thresholds_get() -> Thresholds:
    """The thresholds in force (seed document 004's `get_thresholds`)."""
    return Thresholds.from_row(VerificationThresholds.objects.filter(pk=1).first() or VerificationThresholds())
