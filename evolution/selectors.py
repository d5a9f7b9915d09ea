"""Reads of the evolution app."""

from django.db.models import QuerySet

from evolution.models import ThresholdChange, VerificationLog, VerificationThresholds
from evolution.services.thresholds import get_thresholds


def thresholds_current() -> VerificationThresholds:
    """The stored thresholds row with who changed it last (created with the defaults if missing)."""
    get_thresholds()
    return VerificationThresholds.objects.select_related("updated_by").get(pk=1)


def threshold_changes() -> QuerySet[ThresholdChange]:
    return ThresholdChange.objects.select_related("changed_by").order_by("-changed_at", "-id")


def verification_logs() -> QuerySet[VerificationLog]:
    """Newest first, without the (possibly large) answers."""
    return VerificationLog.objects.defer("old_response", "new_response").order_by("-created_at", "-id")
