"""The back office owns no data; the triage queue is a view of sessions with its own changelist."""

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
