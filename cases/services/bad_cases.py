"""Opening bad cases: one open bad case per session; repeated reports add to it."""

from django.db import IntegrityError, transaction
from django.db.models import F

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, BadCaseSource
from diagnosis.models import DiagnosisSession


def bad_case_open_for_session(*, session: DiagnosisSession, source: str, from_feedback: bool = False) -> BadCase:
    """The session's open bad case, created when there is none (race-safe on the partial unique index).

    `from_feedback` counts one more not_useful report on the bad case.
    """
    if source not in BadCaseSource.values:
        raise ValueError(f"unknown bad case source {source!r}")
    increment = 1 if from_feedback else 0
    for _attempt in range(3):
        existing = BadCase.objects.filter(session=session, status__in=OPEN_BAD_CASE_STATUSES).first()
        if existing is not None:
            if increment:
                BadCase.objects.filter(pk=existing.pk).update(feedback_count=F("feedback_count") + increment)
                existing.refresh_from_db(fields=["feedback_count"])
            return existing
        try:
            with transaction.atomic():
                return BadCase.objects.create(
                    session=session,
                    project_id=session.project_id,
                    source=source,
                    verifier_verdict=session.verifier_verdict,
                    feedback_count=increment,
                )
        except IntegrityError:
            continue  # a concurrent request opened it first; read it on the next pass
    raise RuntimeError(f"could not open a bad case for session {session.pk}")
