"""The diagnosis app's decision records: what people set on a session, their reviews and claim corrections.

Each kind is a writer (`*_records`: stored rows -> plain dicts, oldest first) and a reader
(`*_store`: one `Record` -> rows, returning whether anything changed), composed by
`backoffice.decisions`. A store writes the stored state as it is in the record, never replays the
action that made it, and changes nothing when the rows already say the same.
"""

from collections.abc import Iterator
from typing import Any

from django.db.models import Q

from core.tenancy.models import Project
from diagnosis.models import (
    ClaimBand,
    ClaimCorrection,
    ClaimDecider,
    ClaimVerdict,
    DiagnosisSession,
    Feedback,
    ReviewJudgement,
    SessionReview,
    VerifierVerdict,
)
from diagnosis.services.export import instant_text
from diagnosis.services.records import Record, References, username_of
from diagnosis.signals import figures_changed


def session_state_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    """The people's columns of each session that has any: its feedback and its current review.

    `feedback` is the latest vote's value (or what a bulk seed stored without events), `reviewedAt`
    and `reviewJudgement` the latest review's; stored as they are rather than derived on import.
    """
    sessions = DiagnosisSession.objects.filter(
        Q(feedback__gt="") | Q(reviewed_at__isnull=False) | Q(review_judgement__gt="")
    )
    if project is not None:
        sessions = sessions.filter(project=project)
    fields = ("project__slug", "session_id", "feedback", "reviewed_at", "review_judgement")
    for row in sessions.order_by("created_at", "pk").values(*fields).iterator():
        yield {
            "project": row["project__slug"],
            "sessionId": row["session_id"],
            "feedback": row["feedback"] or None,
            "reviewedAt": instant_text(row["reviewed_at"]),
            "reviewJudgement": row["review_judgement"] or None,
        }


def session_state_store(*, record: Record, references: References) -> bool:
    session = references.session(record)
    values = {
        "feedback": record.choice("feedback", Feedback, blank=True),
        "reviewed_at": record.optional_instant("reviewedAt"),
        "review_judgement": record.choice("reviewJudgement", ReviewJudgement, blank=True),
    }
    rows = DiagnosisSession.objects.filter(pk=session.pk)
    if rows.values(*values).get() == values:
        return False
    # Not save(): updated_at says when the agent's content changed (the evaluation compares it). The
    # feedback shows in the session read and its trace: their version moves in the same UPDATE (once
    # per import: another record of the session may have moved it already).
    rows.update(**values, **references.trace_change(session.pk))
    figures_changed.send(sender=DiagnosisSession, moments=[(session.project_id, session.created_at)])
    return True


def review_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    reviews = SessionReview.objects.select_related("session__project", "reviewer")
    if project is not None:
        reviews = reviews.filter(session__project=project)
    for review in reviews.order_by("created_at", "pk").iterator():
        yield {
            "project": review.session.project.slug,
            "sessionId": review.session.session_id,
            "reviewer": username_of(review.reviewer),
            "judgement": review.judgement,
            "verifierWasRight": review.verifier_was_right,
            "verifierVerdict": review.verifier_verdict or None,
            "notes": review.notes,
            "createdAt": instant_text(review.created_at),
        }


def review_store(*, record: Record, references: References) -> bool:
    """A review is one reviewer's at one instant: found by (session, reviewer, createdAt), else added."""
    session = references.session(record)
    reviewer = references.user(record, "reviewer", null=False)
    created_at = record.instant("createdAt")
    values = {
        "judgement": record.choice("judgement", ReviewJudgement),
        "verifier_was_right": record.flag("verifierWasRight", null=True),
        "verifier_verdict": record.choice("verifierVerdict", VerifierVerdict, blank=True),
        "notes": record.text("notes"),
    }
    rows = SessionReview.objects.filter(session_id=session.pk, reviewer=reviewer, created_at=created_at)
    current = rows.values(*values).first()
    if current == values:
        return False
    if current is None:
        review = SessionReview.objects.create(session_id=session.pk, reviewer=reviewer, **values)
        rows = SessionReview.objects.filter(pk=review.pk)
    rows.update(created_at=created_at, **values)  # created_at is auto_now_add: set it after the insert
    figures_changed.send(
        sender=SessionReview, moments=[(session.project_id, session.created_at), (session.project_id, created_at)]
    )
    return True


def claim_correction_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    corrections = ClaimCorrection.objects.select_related("session__project", "reviewer")
    if project is not None:
        corrections = corrections.filter(session__project=project)
    for correction in corrections.order_by("created_at", "pk").iterator():
        yield {
            "project": correction.session.project.slug,
            "sessionId": correction.session.session_id,
            "round": correction.round,
            "claimId": correction.claim_id,
            "claimText": correction.claim_text,
            "judgeVerdict": correction.judge_verdict,
            "decidedBy": correction.decided_by or None,
            "band": correction.band or None,
            "verdict": correction.verdict,
            "note": correction.note,
            "reviewer": username_of(correction.reviewer),
            "createdAt": instant_text(correction.created_at),
        }


def claim_correction_store(*, record: Record, references: References) -> bool:
    """A correction is one reviewer's on one claim at one instant: found by those, else added."""
    session = references.session(record)
    reviewer = references.user(record, "reviewer", null=False)
    claim_id = record.text("claimId", max_length=128)
    created_at = record.instant("createdAt")
    values = {
        "round": record.count("round"),
        "claim_text": record.text("claimText"),
        "judge_verdict": record.choice("judgeVerdict", ClaimVerdict),
        "decided_by": record.choice("decidedBy", ClaimDecider, blank=True),
        "band": record.choice("band", ClaimBand, blank=True),
        "verdict": record.choice("verdict", ClaimVerdict),
        "note": record.text("note"),
    }
    rows = ClaimCorrection.objects.filter(
        session_id=session.pk, reviewer=reviewer, claim_id=claim_id, created_at=created_at
    )
    current = rows.values(*values).first()
    if current == values:
        return False
    if current is None:
        correction = ClaimCorrection.objects.create(
            session_id=session.pk, reviewer=reviewer, claim_id=claim_id, **values
        )
        rows = ClaimCorrection.objects.filter(pk=correction.pk)
    rows.update(created_at=created_at, **values)  # created_at is auto_now_add: set it after the insert
    return True
