"""The curated case library (useful answers, approved by staff) and bad cases (triaged by reviewers)."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.tenancy.access import TenantQuerySet
from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession, FailureAttribution, VerifierVerdict


class FaultCategory(models.TextChoices):
    """Documented taxonomy of fault categories extracted from answers (see cases/services/extraction.py)."""

    NETWORK = "NETWORK", _("Network")
    DATABASE = "DATABASE", _("Database")
    MEMORY = "MEMORY", _("Memory")
    CPU = "CPU", _("CPU")
    DISK = "DISK", _("Disk")
    CONFIG = "CONFIG", _("Configuration")
    DEPLOYMENT = "DEPLOYMENT", _("Deployment")
    DEPENDENCY = "DEPENDENCY", _("Dependency")
    PERMISSION = "PERMISSION", _("Permission")
    TIMEOUT = "TIMEOUT", _("Timeout")
    GENERAL = "GENERAL", _("General")


class CaseSourceType(models.TextChoices):
    AUTO = "AUTO", _("Automatic (useful feedback)")
    MANUAL = "MANUAL", _("Manual")


class CaseStatus(models.TextChoices):
    PENDING = "pending", _("Pending review")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class Case(models.Model):
    """A case-library entry (seed document 000's case_library); `id` is the public caseId."""

    id = models.UUIDField(_("case id"), primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="cases", verbose_name=_("project"))
    session = models.ForeignKey(
        DiagnosisSession,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="cases",
        verbose_name=_("session"),
    )
    diagnosis_id = models.CharField(
        _("diagnosis id"), max_length=128, blank=True, help_text=_("the session's sessionId")
    )
    source_type = models.CharField(
        max_length=8, choices=CaseSourceType.choices, default=CaseSourceType.AUTO, verbose_name=_("source type")
    )
    fault_category = models.CharField(
        max_length=16, choices=FaultCategory.choices, default=FaultCategory.GENERAL, verbose_name=_("fault category")
    )
    title = models.CharField(max_length=100, verbose_name=_("title"))
    query = models.TextField(blank=True, verbose_name=_("query"))
    root_cause = models.TextField(blank=True, verbose_name=_("root cause"))
    solution = models.TextField(blank=True, verbose_name=_("solution"))
    error_code = models.CharField(max_length=100, blank=True, verbose_name=_("error code"))
    service = models.CharField(max_length=200, blank=True, verbose_name=_("service"))
    created_by = models.CharField(max_length=150, default="system", verbose_name=_("created by"))
    status = models.CharField(
        max_length=16, choices=CaseStatus.choices, default=CaseStatus.PENDING, verbose_name=_("status")
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("reviewed by"),
    )
    reviewed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reviewed at"))
    review_note = models.TextField(blank=True, verbose_name=_("review note"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    objects = TenantQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("case")
        verbose_name_plural = _("case library")
        permissions = [("approve_case", "Can approve or reject cases")]
        constraints = [
            # One case per session, also under concurrent `useful` feedback.
            models.UniqueConstraint(
                fields=["session"], condition=Q(session__isnull=False), name="case_one_per_session"
            ),
            models.CheckConstraint(condition=Q(status__in=CaseStatus.values), name="case_status_valid"),
            models.CheckConstraint(condition=Q(source_type__in=CaseSourceType.values), name="case_source_valid"),
            models.CheckConstraint(condition=Q(fault_category__in=FaultCategory.values), name="case_category_valid"),
        ]
        indexes = [
            models.Index(fields=["status", "-created_at"], name="case_status_created"),
            models.Index(fields=["fault_category", "-created_at"], name="case_category_created"),
            models.Index(fields=["service", "-created_at"], name="case_service_created"),
            models.Index(fields=["error_code", "-created_at"], name="case_errorcode_created"),
            models.Index(fields=["source_type", "-created_at"], name="case_source_created"),
            models.Index(fields=["project", "-created_at"], name="case_project_created"),
            models.Index(fields=["diagnosis_id"], name="case_diagnosis_id"),
        ]

    def __str__(self) -> str:
        return self.title


class CaseRevisionAction(models.TextChoices):
    CREATE = "create", _("Creation")
    EDIT = "edit", _("Edit")
    APPROVE = "approve", _("Approval")
    REJECT = "reject", _("Rejection")


class CaseRevision(models.Model):
    """Who changed a case, when, and what (field -> [old, new])."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="revisions")
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("editor"),
    )
    action = models.CharField(max_length=16, choices=CaseRevisionAction.choices, verbose_name=_("action"))
    changes = models.JSONField(default=dict, blank=True, verbose_name=_("changes"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("revision")
        verbose_name_plural = _("revisions")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["case", "-created_at"], name="caserev_case_created")]

    def __str__(self) -> str:
        return f"{self.case_id} {self.get_action_display()}"


class BadCaseStatus(models.TextChoices):
    OPEN = "open", _("Open")
    TRIAGED = "triaged", _("Triaged")
    FIXED = "fixed", _("Fixed")
    WONT_FIX = "wont_fix", _("Won't fix")


OPEN_BAD_CASE_STATUSES = [BadCaseStatus.OPEN, BadCaseStatus.TRIAGED]


class BadCaseCategory(models.TextChoices):
    HALLUCINATION = "hallucination", _("Hallucination")
    MISSING_EVIDENCE = "missing_evidence", _("Missing evidence")
    # The session held the evidence, the claim cited the wrong ref or excerpt (the inspector's candidates).
    MISCITED_EVIDENCE = "miscited_evidence", _("Evidence existed, cited wrong")
    # The answer was right and the judge wrong about it: a judge mistake, not a bad answer.
    JUDGE_ERROR = "judge_error", _("Judge error")
    WRONG_ROOT_CAUSE = "wrong_root_cause", _("Wrong root cause")
    INCOMPLETE = "incomplete", _("Incomplete")
    OTHER = "other", _("Other")


# The category a session's failure attribution suggests, offered on the bad-case form until a
# person sets one: a citation the gatekeeper could not find in the evidence is missing evidence;
# a claim the verifier found unsupported by what was cited is made up.
CATEGORY_FOR_ATTRIBUTION = {
    FailureAttribution.CITATION_FAILURE: BadCaseCategory.MISSING_EVIDENCE,
    FailureAttribution.UNSUPPORTED_REASONING: BadCaseCategory.HALLUCINATION,
}


class BadCaseSource(models.TextChoices):
    FEEDBACK = "feedback", _("User feedback (not useful)")
    VERIFIER = "verifier", _("Verifier REJECT")
    REVIEWER = "reviewer", _("Reviewer")


class BadCase(models.Model):
    """A session that needs fixing. Never written back into prompts automatically."""

    session = models.ForeignKey(
        DiagnosisSession, on_delete=models.CASCADE, related_name="bad_cases", verbose_name=_("session")
    )
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="bad_cases", verbose_name=_("project"))
    source = models.CharField(max_length=16, choices=BadCaseSource.choices, verbose_name=_("source"))
    status = models.CharField(
        max_length=16, choices=BadCaseStatus.choices, default=BadCaseStatus.OPEN, verbose_name=_("status")
    )
    category = models.CharField(max_length=32, choices=BadCaseCategory.choices, blank=True, verbose_name=_("category"))
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_bad_cases",
        verbose_name=_("assignee"),
    )
    notes = models.TextField(blank=True, verbose_name=_("notes"))
    verifier_verdict = models.CharField(
        max_length=16,
        blank=True,
        choices=VerifierVerdict.choices,
        help_text=_("verifier verdict when opened"),
        verbose_name=_("verifier verdict"),
    )
    feedback_count = models.PositiveIntegerField(default=0, verbose_name=_("feedback count"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))

    objects = TenantQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("bad case")
        verbose_name_plural = _("bad cases")
        constraints = [
            models.UniqueConstraint(
                fields=["session"],
                condition=Q(status__in=["open", "triaged"]),
                name="bad_case_one_open_per_session",
            ),
            models.CheckConstraint(condition=Q(status__in=BadCaseStatus.values), name="bad_case_status_valid"),
            models.CheckConstraint(
                condition=Q(category__in=[*BadCaseCategory.values, ""]), name="bad_case_category_valid"
            ),
            models.CheckConstraint(condition=Q(source__in=BadCaseSource.values), name="bad_case_source_valid"),
        ]
        indexes = [
            models.Index(fields=["status", "-created_at"], name="badcase_status_created"),
            models.Index(fields=["category", "-created_at"], name="badcase_category_created"),
            models.Index(fields=["assignee", "status"], name="badcase_assignee_status"),
            models.Index(fields=["source", "-created_at"], name="badcase_source_created"),
        ]

    def __str__(self) -> str:
        return gettext("Bad case #%(id)s") % {"id": self.pk}
