"""Diagnosis records as the agent reports them, and what SelfEval concludes about them.

A session belongs to a project; its steps, tool invocations and evidence refs are replaced as
a whole when the agent re-posts it. `self_evaluation` is the layered JSON container of seed document 000
and is written only by `diagnosis.services.merge`; the plain columns beside it mirror the values
the admin and the APIs filter on, so filters never reach into JSON.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.tenancy.access import TenantQuerySet
from core.tenancy.models import Project
from diagnosis import constants


class SessionMode(models.TextChoices):
    CHAT = constants.Mode.CHAT, _("Chat")
    AIOPS = constants.Mode.AIOPS, _("AIOps")


class SessionStatus(models.TextChoices):
    RUNNING = "RUNNING", _("Running")
    SUCCEEDED = "SUCCEEDED", _("Succeeded")
    FAILED = "FAILED", _("Failed")


class Feedback(models.TextChoices):
    USEFUL = "useful", _("Useful")
    NOT_USEFUL = "not_useful", _("Not useful")


class VerifierVerdict(models.TextChoices):
    PASS = constants.VerifierVerdict.PASS, _("Pass")
    LOW_CONFID = constants.VerifierVerdict.LOW_CONFID, _("Low confidence")
    REJECT = constants.VerifierVerdict.REJECT, _("Reject")


class AiOpsVerdict(models.TextChoices):
    PASS = constants.AiOpsVerdict.PASS, _("Pass")
    WARN = constants.AiOpsVerdict.WARN, _("Warn")
    FAIL = constants.AiOpsVerdict.FAIL, _("Fail")


class EvaluationState(models.TextChoices):
    PENDING = "PENDING", _("Pending")
    DONE = "DONE", _("Done")
    PARTIAL = "PARTIAL", _("Partial (a producer failed)")
    FAILED = "FAILED", _("Failed")


class FailureAttribution(models.TextChoices):
    NONE = constants.FailureAttribution.NONE, _("None")
    RETRIEVAL_MISS = constants.FailureAttribution.RETRIEVAL_MISS, _("Retrieval miss")
    TOOL_ERROR = constants.FailureAttribution.TOOL_ERROR, _("Tool error")
    CITATION_FAILURE = constants.FailureAttribution.CITATION_FAILURE, _("Citation failure (gatekeeper)")
    UNSUPPORTED_REASONING = constants.FailureAttribution.UNSUPPORTED_REASONING, _("Unsupported reasoning (verifier)")


class DiagnosisSession(models.Model):
    # DO_NOTHING leaves the database's own foreign key to refuse deleting a project that has
    # sessions, and lets the session's children cascade in the database (DB_CASCADE).
    project = models.ForeignKey(
        Project, on_delete=models.DO_NOTHING, related_name="sessions", verbose_name=_("project")
    )
    session_id = models.CharField(_("session id"), max_length=128)
    # The conversation this diagnosis is one turn of (an SDK's session / conversation id); "" for none.
    conversation_id = models.CharField(_("conversation id"), max_length=128, blank=True, default="")
    mode = models.CharField(max_length=8, choices=SessionMode.choices, verbose_name=_("mode"))
    language = models.CharField(
        max_length=8, default="en", help_text=_("zh or en, detected from the query"), verbose_name=_("language")
    )
    query = models.TextField(verbose_name=_("query"))
    answer = models.TextField(blank=True, verbose_name=_("answer"))
    status = models.CharField(max_length=16, choices=SessionStatus.choices, verbose_name=_("status"))
    # Why the agent's run failed, as it reported it (an OTLP root span's status message or exception).
    error = models.TextField(blank=True, default="", verbose_name=_("error"))
    alert = models.JSONField(null=True, blank=True)
    alert_name = models.CharField(max_length=200, blank=True, verbose_name=_("alert name"))
    alert_service = models.CharField(max_length=200, blank=True, verbose_name=_("alert service"))
    active_alerts = models.JSONField(default=list, blank=True)
    executor_output = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))
    ingested_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Fingerprint of the evidence refs (their SHA-256s); a new fingerprint starts a new verifier round.
    evidence_fingerprint = models.CharField(max_length=64, blank=True)

    feedback = models.CharField(max_length=16, choices=Feedback.choices, blank=True, verbose_name=_("feedback"))

    self_evaluation = models.JSONField(default=dict, blank=True)
    evidence_score = models.SmallIntegerField(null=True, blank=True, verbose_name=_("evidence score"))
    verifier_verdict = models.CharField(
        max_length=16, choices=VerifierVerdict.choices, blank=True, verbose_name=_("verifier verdict")
    )
    groundedness_score = models.FloatField(null=True, blank=True, verbose_name=_("groundedness"))
    aiops_verdict = models.CharField(
        max_length=8, choices=AiOpsVerdict.choices, blank=True, verbose_name=_("AIOps verdict")
    )
    failure_attribution = models.CharField(
        max_length=32, choices=FailureAttribution.choices, blank=True, verbose_name=_("failure attribution")
    )
    evaluation_state = models.CharField(
        max_length=8,
        choices=EvaluationState.choices,
        default=EvaluationState.PENDING,
        verbose_name=_("evaluation state"),
    )
    evaluation_attempts = models.PositiveSmallIntegerField(default=0)
    evaluation_error = models.TextField(blank=True)
    evaluation_requested_at = models.DateTimeField(null=True, blank=True)
    evaluated_at = models.DateTimeField(null=True, blank=True, verbose_name=_("evaluated at"))

    # One more with every write that changes what the session's trace shows
    # (diagnosis.services.trace_version): the trace API caches the body and answers ETags by it.
    trace_version = models.PositiveIntegerField(default=1, editable=False)

    reviewed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reviewed at"))
    review_judgement = models.CharField(max_length=16, blank=True, verbose_name=_("review judgement"))
    # Derived by the database, so no code path can forget to keep the triage queue in sync.
    needs_review = models.GeneratedField(
        expression=models.Case(
            models.When(
                Q(reviewed_at__isnull=True)
                & (
                    Q(feedback="not_useful")
                    | Q(verifier_verdict__in=["REJECT", "LOW_CONFID"])
                    | Q(evaluation_state__in=["PARTIAL", "FAILED"])
                ),
                then=models.Value(True),
            ),
            default=models.Value(False),
        ),
        output_field=models.BooleanField(),
        db_persist=True,
        verbose_name=_("needs review"),
    )

    objects = TenantQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("diagnosis session")
        verbose_name_plural = _("diagnosis sessions")
        permissions = [
            ("review_session", "Can mark sessions reviewed"),
            ("reevaluate_session", "Can re-run the evaluation of sessions"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["project", "session_id"], name="session_unique_per_project"),
            models.CheckConstraint(condition=Q(mode__in=SessionMode.values), name="session_mode_valid"),
            models.CheckConstraint(condition=Q(status__in=SessionStatus.values), name="session_status_valid"),
            models.CheckConstraint(condition=Q(feedback__in=[*Feedback.values, ""]), name="session_feedback_valid"),
            models.CheckConstraint(
                condition=Q(verifier_verdict__in=[*VerifierVerdict.values, ""]),
                name="session_verifier_verdict_valid",
            ),
            models.CheckConstraint(
                condition=Q(aiops_verdict__in=[*AiOpsVerdict.values, ""]), name="session_aiops_verdict_valid"
            ),
            models.CheckConstraint(
                condition=Q(evidence_score__isnull=True) | Q(evidence_score__gte=0, evidence_score__lte=100),
                name="session_evidence_score_range",
            ),
        ]
        # Every filter of the API and the admin pairs with the default order (newest first),
        # so each index ends with created_at: the filtered, sorted page is an index range scan.
        indexes = [
            models.Index(fields=["project", "-created_at"], name="session_project_created"),
            models.Index(fields=["session_id"], name="session_sid"),
            # A session's conversation: its other turns, in order (the trace API and the inspector).
            models.Index(fields=["project", "conversation_id", "created_at"], name="session_conversation"),
            models.Index(fields=["mode", "-created_at"], name="session_mode_created"),
            models.Index(fields=["status", "-created_at"], name="session_status_created"),
            models.Index(fields=["feedback", "-created_at"], name="session_feedback_created"),
            models.Index(fields=["verifier_verdict", "-created_at"], name="session_verdict_created"),
            models.Index(fields=["aiops_verdict", "-created_at"], name="session_aiops_created"),
            models.Index(fields=["evidence_score", "-created_at"], name="session_score_created"),
            models.Index(fields=["evaluation_state", "-created_at"], name="session_evalstate_created"),
            models.Index(fields=["failure_attribution", "-created_at"], name="session_attribution_created"),
            models.Index(fields=["alert_service", "-created_at"], name="session_alertsvc_created"),
            models.Index(fields=["language", "-created_at"], name="session_language_created"),
            models.Index(fields=["needs_review", "created_at"], name="session_triage_queue"),
            # The dashboard and the calibration panel count a date range by day, verdict, feedback,
            # score and review state: with these columns in the index (PostgreSQL INCLUDE) that is an
            # index-only scan, not a heap read of every session in the range. SQLite ignores INCLUDE.
            models.Index(
                fields=["created_at"],
                include=[
                    "project",
                    "verifier_verdict",
                    "feedback",
                    "evidence_score",
                    "needs_review",
                    "reviewed_at",
                    "review_judgement",
                ],
                name="session_created_dashboard",
            ),
        ]

    def __str__(self) -> str:
        return self.session_id


class DiagnosisStep(models.Model):
    session = models.ForeignKey(DiagnosisSession, on_delete=models.DB_CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=SessionStatus.choices)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["session", "index"]
        constraints = [
            models.UniqueConstraint(fields=["session", "index"], name="step_unique_index"),
        ]

    def __str__(self) -> str:
        return f"{self.index}. {self.name}"


class InvocationStatus(models.TextChoices):
    SUCCESS = "SUCCESS", _("Success")
    FAILED = "FAILED", _("Failed")


class MatchLevel(models.TextChoices):
    L0 = "L0", _("L0 exact")
    L1 = "L1", _("L1 semantic")
    NONE = "NONE", _("No hit")


class ToolInvocation(models.Model):
    session = models.ForeignKey(DiagnosisSession, on_delete=models.DB_CASCADE, related_name="invocations")
    position = models.PositiveIntegerField(help_text=_("order in which the agent reported the call"))
    invocation_id = models.CharField(max_length=128)
    step_index = models.PositiveIntegerField(null=True, blank=True)
    tool_name = models.CharField(max_length=200, db_index=True)
    status = models.CharField(max_length=16, choices=InvocationStatus.choices)
    arguments = models.JSONField(default=dict, blank=True)
    output = models.JSONField(null=True, blank=True, help_text=_("raw tool output: text or JSON"))
    error = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # Blank when the call is not a retrieval call (it carried no retrievalDetails).
    match_level = models.CharField(max_length=8, choices=MatchLevel.choices, blank=True)

    class Meta:
        ordering = ["session", "position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "invocation_id"], name="invocation_unique_id"),
            models.UniqueConstraint(fields=["session", "position"], name="invocation_unique_position"),
            models.CheckConstraint(condition=Q(status__in=InvocationStatus.values), name="invocation_status_valid"),
            models.CheckConstraint(
                condition=Q(match_level__in=[*MatchLevel.values, ""]), name="invocation_match_level_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.invocation_id} {self.tool_name}"

    @property
    def is_retrieval(self) -> bool:
        return bool(self.match_level)


class EvidenceRef(models.Model):
    """One retrieved chunk. `content_sha256` proves later that the judged evidence is unchanged."""

    session = models.ForeignKey(DiagnosisSession, on_delete=models.DB_CASCADE, related_name="evidence_refs")
    invocation = models.ForeignKey(ToolInvocation, on_delete=models.DB_CASCADE, related_name="evidence_refs")
    position = models.PositiveIntegerField()
    ref_id = models.CharField(max_length=200)
    source = models.CharField(max_length=500, blank=True)
    content = models.TextField()
    content_sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["invocation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "ref_id"], name="evidence_ref_unique_per_session"),
        ]
        indexes = [models.Index(fields=["ref_id"], name="evidence_ref_refid")]

    def __str__(self) -> str:
        return self.ref_id


class ClaimVerdict(models.TextChoices):
    SUPPORTED = constants.ClaimVerdict.SUPPORTED, _("Supported")
    UNSUPPORTED = constants.ClaimVerdict.UNSUPPORTED, _("Unsupported")
    CONTRADICTED = constants.ClaimVerdict.CONTRADICTED, _("Contradicted")
    NO_EVIDENCE = constants.ClaimVerdict.NO_EVIDENCE, _("No evidence")


class ClaimBand(models.TextChoices):
    SUPPORTED = constants.ClaimBand.SUPPORTED, _("Supported")
    UNDECIDED = constants.ClaimBand.UNDECIDED, _("Undecided")
    UNSUPPORTED = constants.ClaimBand.UNSUPPORTED, _("Unsupported")
    CONTRADICTED = constants.ClaimBand.CONTRADICTED, _("Contradicted")


class ClaimDecider(models.TextChoices):
    RULE = constants.ClaimDecider.RULE, _("Verifier rule")
    DETERMINISTIC = constants.ClaimDecider.DETERMINISTIC, _("Deterministic judge")
    LLM = constants.ClaimDecider.LLM, _("LLM judge")


class ClaimCheck(models.Model):
    """One claim's verdict in one verifier round, queryable without opening the JSON."""

    session = models.ForeignKey(
        DiagnosisSession, on_delete=models.DB_CASCADE, related_name="claim_checks", verbose_name=_("session")
    )
    round = models.PositiveIntegerField(verbose_name=_("round"))
    claim_id = models.CharField(max_length=128, verbose_name=_("claim id"))
    text = models.TextField(verbose_name=_("claim"))
    critical = models.BooleanField(default=False, verbose_name=_("critical"))
    verdict = models.CharField(max_length=16, choices=ClaimVerdict.choices, verbose_name=_("verdict"))
    judge = models.CharField(max_length=64, verbose_name=_("judge"))
    rationale = models.TextField(blank=True, verbose_name=_("rationale"))
    # The rationale's `diagnosis.messages` code and parameters: the admin shows it translated.
    rationale_code = models.CharField(max_length=64, blank=True, verbose_name=_("rationale code"))
    rationale_params = models.JSONField(default=dict, blank=True, verbose_name=_("rationale parameters"))
    # The judge's decision: calibrated probabilities (null when no model scored the claim), the
    # band they fall in, who decided, and the strongest reasons ({"code", "params", "text"}).
    p_supported = models.FloatField(null=True, blank=True, verbose_name=_("P(supported)"))
    p_contradicted = models.FloatField(null=True, blank=True, verbose_name=_("P(contradicted)"))
    band = models.CharField(max_length=16, choices=ClaimBand.choices, blank=True, verbose_name=_("band"))
    decided_by = models.CharField(max_length=16, choices=ClaimDecider.choices, blank=True, verbose_name=_("decided by"))
    reasons = models.JSONField(default=list, blank=True, verbose_name=_("strongest reasons"))
    facts = models.JSONField(default=list, blank=True, verbose_name=_("facts checked"))
    bindings = models.JSONField(
        default=list,
        blank=True,
        help_text=_("gatekeeper status per evidence binding"),
        verbose_name=_("evidence bindings"),
    )
    service = models.CharField(
        max_length=200, blank=True, help_text=_("service the claim is about"), verbose_name=_("service")
    )
    checked_refs = models.ManyToManyField(EvidenceRef, through="ClaimCheckRef", blank=True, related_name="claim_checks")
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = TenantQuerySet.through("session__project_id").as_manager()

    class Meta:
        verbose_name = _("claim check")
        verbose_name_plural = _("claim checks")
        ordering = ["session", "round", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "round", "claim_id"], name="claim_check_unique"),
            models.CheckConstraint(condition=Q(verdict__in=ClaimVerdict.values), name="claim_check_verdict_valid"),
            models.CheckConstraint(condition=Q(band__in=["", *ClaimBand.values]), name="claim_check_band_valid"),
            models.CheckConstraint(
                condition=Q(decided_by__in=["", *ClaimDecider.values]), name="claim_check_decided_by_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["verdict", "service", "-created_at"], name="claim_verdict_service"),
            models.Index(fields=["verdict", "-created_at"], name="claim_verdict_created"),
        ]

    def __str__(self) -> str:
        return f"{self.claim_id}: {self.get_verdict_display()}"


class ClaimCheckRef(models.Model):
    """Which refs a claim check looked at; goes with the ref when a re-ingestion replaces it."""

    claim_check = models.ForeignKey(ClaimCheck, on_delete=models.DB_CASCADE)
    evidence_ref = models.ForeignKey(EvidenceRef, on_delete=models.DB_CASCADE)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim_check", "evidence_ref"], name="claim_check_ref_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.claim_check_id} -> {self.evidence_ref_id}"


class AiOpsCheckSeverity(models.TextChoices):
    CRITICAL = constants.AiOpsCheckSeverity.CRITICAL, _("Critical")
    WARNING = constants.AiOpsCheckSeverity.WARNING, _("Warning")


class AiOpsCheck(models.Model):
    """One AIOps rule check of the session's current `aiops_rule_evaluation` layer, as a row.

    Written with the layer, in the same transaction (`services.evaluation`), and removed with it,
    so the admin filter and the dashboard count failed checks without reading the JSON.
    """

    session = models.ForeignKey(
        DiagnosisSession, on_delete=models.DB_CASCADE, related_name="aiops_checks", verbose_name=_("session")
    )
    name = models.CharField(max_length=64, verbose_name=_("check"))
    passed = models.BooleanField(verbose_name=_("passed"))
    severity = models.CharField(max_length=16, choices=AiOpsCheckSeverity.choices, verbose_name=_("severity"))
    applicable = models.BooleanField(default=True, verbose_name=_("applicable"))
    reason = models.TextField(blank=True, verbose_name=_("reason"))
    reason_code = models.CharField(max_length=64, blank=True, verbose_name=_("reason code"))
    reason_params = models.JSONField(default=dict, blank=True, verbose_name=_("reason parameters"))

    class Meta:
        verbose_name = _("AIOps check")
        verbose_name_plural = _("AIOps checks")
        ordering = ["session", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "name"], name="aiops_check_unique"),
            models.CheckConstraint(
                condition=Q(severity__in=AiOpsCheckSeverity.values), name="aiops_check_severity_valid"
            ),
        ]
        indexes = [
            # "Sessions where check X failed" (the admin filter); the unique index above serves the
            # dashboard's per-session probe.
            models.Index(fields=["name", "session"], condition=Q(passed=False), name="aiops_check_failed"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {gettext('passed') if self.passed else gettext('failed')}"


class ReviewJudgement(models.TextChoices):
    CORRECT = "correct", _("Correct")
    PARTLY_CORRECT = "partly_correct", _("Partly correct")
    WRONG = "wrong", _("Wrong")


class SessionReview(models.Model):
    """A reviewer's own judgement of the answer and of the verifier's verdict."""

    session = models.ForeignKey(
        DiagnosisSession, on_delete=models.CASCADE, related_name="reviews", verbose_name=_("session")
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("reviewer")
    )
    judgement = models.CharField(max_length=16, choices=ReviewJudgement.choices, verbose_name=_("judgement"))
    verifier_was_right = models.BooleanField(null=True, blank=True, verbose_name=_("verifier was right"))
    verifier_verdict = models.CharField(
        max_length=16,
        blank=True,
        choices=VerifierVerdict.choices,
        help_text=_("verdict at review time"),
        verbose_name=_("verifier verdict"),
    )
    notes = models.TextField(blank=True, verbose_name=_("notes"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = TenantQuerySet.through("session__project_id").as_manager()

    class Meta:
        verbose_name = _("session review")
        verbose_name_plural = _("session reviews")
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(judgement__in=ReviewJudgement.values), name="review_judgement_valid"),
        ]
        indexes = [models.Index(fields=["session", "-created_at"], name="review_session_created")]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.get_judgement_display()}"


class ClaimCorrection(models.Model):
    """A person's verdict on one claim the judge decided: the judge confirmed (`verdict` equal to
    `judge_verdict`) or corrected. History is kept; the newest row of a claim is what it reads now.

    The claim's text, the judge's verdict, who decided and the band are copied from the claim check
    at the time: a re-evaluation replaces the checks, and the label must still say what it judged.
    """

    session = models.ForeignKey(
        DiagnosisSession, on_delete=models.CASCADE, related_name="claim_corrections", verbose_name=_("session")
    )
    round = models.PositiveIntegerField(verbose_name=_("round"))
    claim_id = models.CharField(max_length=128, verbose_name=_("claim id"))
    claim_text = models.TextField(verbose_name=_("claim"))
    judge_verdict = models.CharField(max_length=16, choices=ClaimVerdict.choices, verbose_name=_("judge's verdict"))
    decided_by = models.CharField(max_length=16, choices=ClaimDecider.choices, blank=True, verbose_name=_("decided by"))
    band = models.CharField(max_length=16, choices=ClaimBand.choices, blank=True, verbose_name=_("band"))
    verdict = models.CharField(max_length=16, choices=ClaimVerdict.choices, verbose_name=_("people's verdict"))
    note = models.TextField(blank=True, verbose_name=_("note"))
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("reviewer")
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = TenantQuerySet.through("session__project_id").as_manager()

    class Meta:
        verbose_name = _("claim correction")
        verbose_name_plural = _("claim corrections")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(verdict__in=ClaimVerdict.values), name="claim_correction_verdict_valid"),
            models.CheckConstraint(
                condition=Q(judge_verdict__in=ClaimVerdict.values), name="claim_correction_judge_verdict_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["session", "claim_id", "-created_at"], name="claim_correction_claim"),
            # The calibration page reads the corrections of a date range.
            models.Index(fields=["created_at"], name="claim_correction_created"),
        ]

    def __str__(self) -> str:
        return f"{self.claim_id}: {self.get_judge_verdict_display()} -> {self.get_verdict_display()}"

    @property
    def judge_right(self) -> bool:
        return self.verdict == self.judge_verdict
