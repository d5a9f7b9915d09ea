"""User feedback on answers: every submission is kept; the session's `feedback` holds the latest."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from core.tenancy.access import TenantQuerySet
from core.tenancy.models import ProjectAPIKey
from diagnosis.models import DiagnosisSession, Feedback


class FeedbackClient(models.TextChoices):
    API_KEY = "api_key", _("Project API key")
    ADMIN = "admin", _("Admin session")
    TOKEN = "token", _("End-user feedback token")


class FeedbackEvent(models.Model):
    # Events are written on the feedback hot path: no index beyond what reads need. The
    # (session, created_at) index below serves the session lookups; events are never looked up
    # by key (deleting a key, which sets its events' key to NULL, may scan).
    session = models.ForeignKey(
        DiagnosisSession,
        on_delete=models.CASCADE,
        related_name="feedback_events",
        verbose_name=_("session"),
        db_index=False,
    )
    value = models.CharField(max_length=16, choices=Feedback.choices, verbose_name=_("feedback"))
    comment = models.TextField(blank=True, verbose_name=_("comment"))
    reviewer = models.CharField(
        max_length=150, blank=True, help_text=_("who the client says gave the feedback"), verbose_name=_("reviewer")
    )
    client = models.CharField(max_length=16, choices=FeedbackClient.choices, verbose_name=_("client"))
    api_key = models.ForeignKey(
        ProjectAPIKey,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("API key"),
        db_index=False,
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("user"),
    )
    end_user_id = models.CharField(max_length=128, blank=True, verbose_name=_("end user id"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = TenantQuerySet.through("session__project_id").as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("feedback event")
        verbose_name_plural = _("feedback events")
        constraints = [
            models.CheckConstraint(condition=Q(value__in=Feedback.values), name="feedback_event_value_valid"),
            models.CheckConstraint(condition=Q(client__in=FeedbackClient.values), name="feedback_event_client_valid"),
        ]
        indexes = [
            models.Index(fields=["session", "-created_at"], name="fbevent_session_created"),
            models.Index(fields=["value", "-created_at"], name="fbevent_value_created"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.get_value_display()}"


class EndUserVote(models.Model):
    """One vote per end user per session; a new vote replaces the previous one (history stays in events)."""

    session = models.ForeignKey(DiagnosisSession, on_delete=models.CASCADE, related_name="end_user_votes")
    end_user_id = models.CharField(max_length=128)
    value = models.CharField(max_length=16, choices=Feedback.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "end_user_id"], name="one_vote_per_end_user"),
            models.CheckConstraint(condition=Q(value__in=Feedback.values), name="end_user_vote_value_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}/{self.end_user_id}: {self.get_value_display()}"
