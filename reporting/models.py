"""The day rollups: a project's sessions of one day counted, and the marks that say a day changed."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from core.tenancy.access import TenantQuerySet
from core.tenancy.models import Project


class SessionDay(models.Model):
    """A project's sessions of one day (in TIME_ZONE) counted: the rollup the dashboard and the
    calibration panel read past days from, so a range costs a number of days, not of sessions.

    Recomputed from the sessions, their AIOps check rows and their reviews (never incremented) by
    `reporting.services.session_days` when a reader needs a day that a `SessionDayChange` marks;
    `rollups_rebuild` recomputes any range from scratch. The table is the one the diagnosis app
    created (`diagnosis_sessionday`): the model moved, the rows stayed.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", verbose_name=_("project"))
    day = models.DateField(verbose_name=_("day"))
    sessions = models.PositiveIntegerField(default=0)
    reviewed = models.PositiveIntegerField(default=0)
    score_missing = models.PositiveIntegerField(default=0)
    # Sessions per evidence-score bucket (0-9, 10-19, ..., 90-100), in order.
    score_buckets = models.JSONField(default=list)
    # Sessions per (verdict, feedback, judgement), a flat list in the order of
    # `reporting.counting.cube_index`; verdict and feedback counts are its sums.
    cube = models.JSONField(default=list)
    # AIOps check name -> sessions of the day where it failed.
    aiops_failures = models.JSONField(default=dict)
    # Reviews of the day's sessions saying the verifier was right / wrong.
    verifier_right = models.PositiveIntegerField(default=0)
    verifier_wrong = models.PositiveIntegerField(default=0)
    # Reviews recorded on this day (whatever day their session is from): reviewer throughput.
    reviews = models.PositiveIntegerField(default=0)

    objects = TenantQuerySet.as_manager()

    class Meta:
        db_table = "diagnosis_sessionday"
        verbose_name = _("day of sessions")
        verbose_name_plural = _("days of sessions")
        constraints = [models.UniqueConstraint(fields=["project", "day"], name="session_day_unique")]
        indexes = [models.Index(fields=["day"], name="session_day_day")]

    def __str__(self) -> str:
        return f"{self.project_id} {self.day}"


class SessionDayChange(models.Model):
    """A mark that something one day counts changed: written in the changing transaction, so it
    commits or rolls back with the change; deleted when that day's rollup is recomputed.

    Append-only, without a unique key: a write never waits on another write's mark (the rollup
    row itself would be one hot row per project and day, locked by every vote and evaluation).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()

    class Meta:
        db_table = "diagnosis_sessiondaychange"
        indexes = [models.Index(fields=["day"], name="session_day_change_day")]

    def __str__(self) -> str:
        return f"{self.project_id} {self.day}"
