"""A reviewer's own judgement of a session's answer, of the verifier's verdict and of its claims' verdicts."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.models import ClaimCheck, ClaimCorrection, ClaimVerdict, DiagnosisSession, ReviewJudgement, SessionReview
from diagnosis.signals import figures_changed


def session_mark_reviewed(
    *,
    session: DiagnosisSession,
    reviewer: AbstractBaseUser,
    judgement: str,
    verifier_was_right: bool | None,
    notes: str = "",
) -> SessionReview:
    """Record a review and take the session out of the triage queue.

    Writes one `SessionReview` (history is kept; the newest one is the session's current
    judgement) and sets `reviewed_at` / `review_judgement` in the same transaction, so
    `needs_review` (a generated column) flips exactly when the review exists.
    Raises PermissionDenied without `diagnosis.review_session`, ValidationError for an
    unknown judgement.
    """
    if not reviewer.has_perm("diagnosis.review_session"):
        raise PermissionDenied("You may not mark sessions reviewed.")
    if judgement not in ReviewJudgement.values:
        raise ValidationError({"judgement": f"unknown judgement {judgement!r}"})
    if verifier_was_right not in (True, False, None):
        raise ValidationError({"verifier_was_right": "must be true, false or unknown"})
    now = timezone.now()
    with transaction.atomic():
        # Lock the row: the verdict recorded with the review is the one the reviewer judged.
        locked = (
            DiagnosisSession.objects.select_for_update()
            .only("pk", "project_id", "created_at", "verifier_verdict")
            .get(pk=session.pk)
        )
        review = SessionReview.objects.create(
            session_id=locked.pk,
            reviewer=reviewer,
            judgement=judgement,
            verifier_was_right=verifier_was_right,
            verifier_verdict=locked.verifier_verdict,
            notes=notes.strip(),
        )
        DiagnosisSession.objects.filter(pk=locked.pk).update(reviewed_at=now, review_judgement=judgement)
        # The session's day (reviewed, judgement, verifier right) and the review's (throughput).
        figures_changed.send(
            sender=SessionReview,
            moments=[(locked.project_id, locked.created_at), (locked.project_id, review.created_at)],
        )
    session.reviewed_at = now
    session.review_judgement = judgement
    return review


# What a person may say a claim is: "no evidence" is the agent's own report, never a label.
CORRECTABLE_VERDICTS = (ClaimVerdict.SUPPORTED, ClaimVerdict.UNSUPPORTED, ClaimVerdict.CONTRADICTED)
JUDGE_RIGHT = "right"  # the judge's verdict, confirmed


def claim_correction_record(
    *, session: DiagnosisSession, reviewer: AbstractBaseUser, claim_id: str, verdict: str, note: str = ""
) -> ClaimCorrection:
    """Record a person's verdict on a claim of the session's latest verifier round.

    `verdict` is one of `CORRECTABLE_VERDICTS`, or `JUDGE_RIGHT` to confirm the judge's (a
    no-evidence claim confirmed keeps its verdict). Raises PermissionDenied without
    `diagnosis.review_session`, ValidationError for an unknown verdict or a claim the latest
    round does not hold.
    """
    if not reviewer.has_perm("diagnosis.review_session"):
        raise PermissionDenied("You may not correct the judge's verdicts.")
    if verdict != JUDGE_RIGHT and verdict not in CORRECTABLE_VERDICTS:
        choices = ", ".join([JUDGE_RIGHT, *CORRECTABLE_VERDICTS])
        raise ValidationError({"verdict": f"unknown verdict {verdict!r}; one of {choices}"})
    check = (
        ClaimCheck.objects.filter(session_id=session.pk, claim_id=claim_id)
        .only("round", "claim_id", "text", "verdict", "decided_by", "band")
        .order_by("-round")
        .first()
    )
    latest_round = ClaimCheck.objects.filter(session_id=session.pk).order_by("-round").values_list("round", flat=True)
    if check is None or check.round != latest_round.first():
        raise ValidationError({"claim_id": f"the session's latest verifier round has no claim {claim_id!r}"})
    return ClaimCorrection.objects.create(
        session_id=session.pk,
        round=check.round,
        claim_id=check.claim_id,
        claim_text=check.text,
        judge_verdict=check.verdict,
        decided_by=check.decided_by,
        band=check.band,
        verdict=check.verdict if verdict == JUDGE_RIGHT else verdict,
        note=note.strip(),
        reviewer=reviewer,
    )
