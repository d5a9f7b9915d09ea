"""The triage queue is a view of sessions with its own changelist; the back office adds only who
works on which session: an assignment a reviewer takes, and a lock while the inspector is open."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from diagnosis.models import DiagnosisSession


class TriageItem(DiagnosisSession):
    """A session waiting for a reviewer (`needs_review`), listed oldest first by the triage queue."""

    class Meta:
        proxy = True
        ordering = ["created_at", "id"]
        verbose_name = _("session to triage")
        verbose_name_plural = _("triage queue")
        # Viewing the queue is viewing sessions: no permissions of its own.
        default_permissions = ()


class TriageAssignment(models.Model):
    """A reviewer took this session: it is in their queue, and the others leave it to them.

    Written only by `services.sharing`; a reviewer takes and releases their own, a user with
    `reassign_triageassignment` anybody's.
    """

    session = models.OneToOneField(
        DiagnosisSession,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="triage_assignment",
        verbose_name=_("session"),
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("assignee")
    )
    assigned_at = models.DateTimeField(verbose_name=_("assigned at"))

    class Meta:
        verbose_name = _("triage assignment")
        verbose_name_plural = _("triage assignments")
        default_permissions = ()
        permissions = [("reassign_triageassignment", "Can take or release sessions assigned to others")]
        indexes = [models.Index(fields=["assignee", "assigned_at"], name="triage_assignee")]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.assignee_id}"


class ReviewLock(models.Model):
    """Someone has the session open in the inspector (a soft lock: shown to others, never enforced).

    The open page refreshes `seen_at`; a lock not refreshed for `REVIEW_LOCK_SECONDS` has expired
    and counts for nothing, whatever row is left.
    """

    session = models.OneToOneField(
        DiagnosisSession, on_delete=models.CASCADE, primary_key=True, related_name="review_lock"
    )
    holder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    opened_at = models.DateTimeField()
    seen_at = models.DateTimeField()

    class Meta:
        default_permissions = ()

    def __str__(self) -> str:
        return f"{self.session_id}: {self.holder_id}"
