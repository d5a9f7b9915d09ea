"""Evolution verification: the thresholds in force, their change history, and a log of every
verification (seed document 004's `_log_verification`).

The thresholds live in exactly one row (pk 1) so every process reads the same values; ranges are
enforced by the database as well as by `evolution.services.thresholds`, from one table of specs.
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

# name: (type, minimum, maximum, default, description). The defaults are seed document 004's table.
THRESHOLD_SPECS: dict[str, tuple[type, float, float, float, str]] = {
    "min_confidence": (float, 0.0, 1.0, 0.7, _("Minimum confidence")),
    "min_improvement_ratio": (float, 1.0, 10.0, 1.2, _("Minimum length improvement ratio (1.2 = 20 %)")),
    "min_length": (int, 0, 100_000, 500, _("Minimum answer length in characters (字)")),
    "min_user_satisfaction": (float, 0.0, 5.0, 4.0, _("Minimum user satisfaction (0-5)")),
    "max_competitor_rank": (int, 1, 100, 2, _("Required competitor rank (top N)")),
    "min_structure_score": (float, 0.0, 1.0, 0.6, _("Minimum structure score")),
}


def _validators(name: str) -> list:
    _type, low, high, _default, _label = THRESHOLD_SPECS[name]
    return [MinValueValidator(low), MaxValueValidator(high)]


def _help(name: str) -> str:
    _type, low, high, default, label = THRESHOLD_SPECS[name]
    return format_lazy("{} ({} {:g}, {} {:g}–{:g})", label, _("default"), default, _("range"), low, high)


def _range_check(name: str) -> models.CheckConstraint:
    _type, low, high, _default, _label = THRESHOLD_SPECS[name]
    return models.CheckConstraint(
        condition=Q(**{f"{name}__gte": low, f"{name}__lte": high}), name=f"evolution_thresholds_{name}_range"
    )


class VerificationThresholds(models.Model):
    """The single current set of thresholds, stored by a data migration; read with
    `evolution.selectors.thresholds_get()`, written only by `thresholds_update()`, which records a
    `ThresholdChange` for every change."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    min_confidence = models.FloatField(
        _("minimum confidence"),
        default=0.7,
        validators=_validators("min_confidence"),
        help_text=_help("min_confidence"),
    )
    min_improvement_ratio = models.FloatField(
        _("minimum improvement ratio"),
        default=1.2,
        validators=_validators("min_improvement_ratio"),
        help_text=_help("min_improvement_ratio"),
    )
    min_length = models.PositiveIntegerField(
        _("minimum length (characters)"),
        default=500,
        validators=_validators("min_length"),
        help_text=_help("min_length"),
    )
    min_user_satisfaction = models.FloatField(
        _("minimum user satisfaction"),
        default=4.0,
        validators=_validators("min_user_satisfaction"),
        help_text=_help("min_user_satisfaction"),
    )
    max_competitor_rank = models.PositiveSmallIntegerField(
        _("required competitor rank (top N)"),
        default=2,
        validators=_validators("max_competitor_rank"),
        help_text=_help("max_competitor_rank"),
    )
    min_structure_score = models.FloatField(
        _("minimum structure score"),
        default=0.6,
        validators=_validators("min_structure_score"),
        help_text=_help("min_structure_score"),
    )
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("updated by"),
    )

    class Meta:
        verbose_name = _("verification thresholds")
        verbose_name_plural = _("verification thresholds")
        constraints = [
            models.CheckConstraint(condition=Q(id=1), name="evolution_thresholds_single_row"),
            *(_range_check(name) for name in THRESHOLD_SPECS),
        ]

    def __str__(self) -> str:
        return str(_("Current verification thresholds"))


class ThresholdChange(models.Model):
    """One call of `thresholds_update` that changed something: who, when, from where, and each
    field's old and new value (`{"min_length": {"old": 500, "new": 800}}`)."""

    thresholds = models.ForeignKey(
        VerificationThresholds, on_delete=models.CASCADE, related_name="changes", verbose_name=_("thresholds")
    )
    changed_at = models.DateTimeField(_("changed at"), auto_now_add=True, db_index=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("changed by"),
    )
    source = models.CharField(_("source"), max_length=16)
    changes = models.JSONField(_("changes"))

    class Meta:
        ordering = ["-changed_at", "-id"]
        verbose_name = _("threshold change")
        verbose_name_plural = _("threshold changes")

    def __str__(self) -> str:
        return ", ".join(f"{k}: {v['old']} → {v['new']}" for k, v in self.changes.items())


class VerificationSource(models.TextChoices):
    API = "api", _("API")
    PIPELINE = "pipeline", _("Evolution pipeline")
    CODE = "code", _("Code")


class Adoption(models.TextChoices):
    NONE = "", _("Not decided")
    ADOPTED = "adopted", _("Adopted")
    REJECTED = "rejected", _("Rejected")


class CompetitorStatus(models.TextChoices):
    DISABLED = "disabled", _("Disabled")
    OK = "ok", _("OK")
    DEGRADED = "degraded", _("Degraded")


class VerificationLog(models.Model):
    """Every verification, cached or not. The columns beside `metrics` mirror the values the
    admin filters and lists on, so filters never reach into JSON."""

    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    source = models.CharField(_("source"), max_length=16, choices=VerificationSource.choices)
    project = models.ForeignKey(
        "tenancy.Project",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("project"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("requested by"),
    )
    query = models.TextField(_("query"))
    old_response = models.TextField(_("old response"), blank=True)
    new_response = models.TextField(_("new response"))
    user_feedback = models.JSONField(_("user feedback"), null=True, blank=True)
    lang = models.CharField(_("language"), max_length=8)
    fingerprint = models.CharField(_("input fingerprint"), max_length=64, db_index=True)

    is_valid = models.BooleanField(_("valid"))
    confidence = models.FloatField(_("confidence"))
    reasons = models.JSONField(_("reasons"), default=list)
    suggestions = models.JSONField(_("suggestions"), default=list)
    metrics = models.JSONField(_("metrics"), default=dict)
    thresholds = models.JSONField(_("thresholds used"), default=dict)
    duration_ms = models.FloatField(_("duration (ms)"))
    cached = models.BooleanField(_("served from cache"), default=False)
    adoption = models.CharField(_("adoption"), max_length=16, choices=Adoption.choices, blank=True, default="")

    new_length = models.PositiveIntegerField(_("new length"))
    structure_score = models.FloatField(_("structure score"))
    quality_overall = models.FloatField(_("new overall quality"))
    quality_delta = models.FloatField(_("quality delta"))
    competitor_status = models.CharField(
        _("competitors"), max_length=16, choices=CompetitorStatus.choices, default=CompetitorStatus.DISABLED
    )
    competitor_rank = models.PositiveSmallIntegerField(_("competitor rank"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("verification")
        verbose_name_plural = _("verification log")
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="evo_log_created_idx"),
            models.Index(fields=["is_valid", "-created_at"], name="evo_log_valid_idx"),
            models.Index(fields=["source", "-created_at"], name="evo_log_source_idx"),
            models.Index(fields=["adoption", "-created_at"], name="evo_log_adoption_idx"),
            models.Index(fields=["competitor_status", "-created_at"], name="evo_log_competitor_idx"),
            models.Index(fields=["cached", "-created_at"], name="evo_log_cached_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(confidence__gte=0, confidence__lte=1), name="evo_log_confidence_range"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {_('valid') if self.is_valid else _('invalid')} {self.query[:40]}"
