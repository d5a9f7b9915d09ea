"""A reviewer's own judgement of a session's answer (and of the verifier's verdict)."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.models import DiagnosisSession, ReviewJudgement, SessionReview
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
