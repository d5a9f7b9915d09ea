"""Bad cases: one open bad case per session (repeated reports add to it), triaged by reviewers."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from cases.models import OPEN_BAD_CASE_STATUSES, BadCase, BadCaseCategory, BadCaseSource, BadCaseStatus
from diagnosis.models import DiagnosisSession, VerifierVerdict
from diagnosis.services.trace_version import session_trace_changed


def bad_case_open_for_session(*, session: DiagnosisSession, source: str, from_feedback: bool = False) -> BadCase:
    """The session's open bad case, created when there is none (race-safe on the partial unique index).

    `from_feedback` counts one more not_useful report on the bad case. Either write moves the
    session's trace version.
    """
    if source not in BadCaseSource.values:
        raise ValueError(f"unknown bad case source {source!r}")
    increment = 1 if from_feedback else 0
    for _attempt in range(3):
        existing = BadCase.objects.filter(session=session, status__in=OPEN_BAD_CASE_STATUSES).first()
        if existing is not None:
            if increment:
                session_trace_changed(session_pk=session.pk)
                BadCase.objects.filter(pk=existing.pk).update(feedback_count=F("feedback_count") + increment)
                existing.refresh_from_db(fields=["feedback_count"])
            return existing
        try:
            with transaction.atomic():
                session_trace_changed(session_pk=session.pk)
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


def bad_case_open_for_rejected_session(*, session: DiagnosisSession) -> BadCase | None:
    """Open a bad case the first time the verifier rejects the session, never again after triage.

    `session.verifier_verdict` is the verdict just stored; anything but REJECT opens nothing.
    """
    if session.verifier_verdict != VerifierVerdict.REJECT:
        return None
    if BadCase.objects.filter(session_id=session.pk, source=BadCaseSource.VERIFIER).exists():
        return None
    return bad_case_open_for_session(session=session, source=BadCaseSource.VERIFIER)


_CLOSED_STATUSES = (BadCaseStatus.FIXED, BadCaseStatus.WONT_FIX)
_UPDATABLE_FIELDS = ("status", "category", "assignee", "notes")


def bad_case_update_errors(*, bad_case: BadCase, fields: dict[str, Any]) -> dict[str, str]:
    """What is wrong with triaging `bad_case` with `fields` (field -> message, empty when nothing):
    unknown values, and reopening while another bad case of the session is open.

    The bad-case form runs it in `clean()`, so a refused save shows the form again with what was
    typed; `bad_case_update` runs it before writing.
    """
    errors: dict[str, str] = {}
    unknown = sorted(set(fields) - set(_UPDATABLE_FIELDS))
    if unknown:
        errors["__all__"] = f"Not updatable bad case fields: {', '.join(unknown)}"
    if "status" in fields and fields["status"] not in BadCaseStatus.values:
        errors["status"] = f"Unknown status {fields['status']!r}; one of {', '.join(BadCaseStatus.values)}."
    if "category" in fields and fields["category"] not in [*BadCaseCategory.values, ""]:
        errors["category"] = f"Unknown category {fields['category']!r}; one of {', '.join(BadCaseCategory.values)}."
    if "notes" in fields and not isinstance(fields["notes"], str):
        errors["notes"] = "Must be text."
    assignee = fields.get("assignee")
    if assignee is not None and not isinstance(assignee, get_user_model()):
        errors["assignee"] = "Must be a user or None."
    reopening = fields.get("status") in OPEN_BAD_CASE_STATUSES and bad_case.status in _CLOSED_STATUSES
    if reopening and "status" not in errors and _another_open(bad_case):
        errors["status"] = gettext("The session already has another open bad case; close that one first.")
    return errors


def _another_open(bad_case: BadCase) -> bool:
    return (
        BadCase.objects.filter(session_id=bad_case.session_id, status__in=OPEN_BAD_CASE_STATUSES)
        .exclude(pk=bad_case.pk)
        .exists()
    )


def bad_case_update(*, bad_case: BadCase, user: AbstractBaseUser, add_note: str = "", **fields: Any) -> BadCase:
    """Triage a bad case: status, category, assignee, notes. Needs `cases.change_badcase`.

    `add_note` appends a line to the notes as they are under the row lock, once (a note already
    there is not added again). `closed_at` is set when the status becomes fixed or won't fix and
    cleared on reopening; reopening while another bad case of the session is open is refused
    (`bad_case_update_errors`; the partial unique index settles a concurrent reopening).
    """
    if not user.has_perm("cases.change_badcase"):
        raise PermissionDenied("Triaging bad cases needs the cases.change_badcase permission.")
    errors = bad_case_update_errors(bad_case=bad_case, fields=fields)
    if not isinstance(add_note, str):
        errors["notes"] = "Must be text."
    if errors:
        raise ValidationError(errors)
    add_note = add_note.strip()
    try:
        with transaction.atomic():
            session_trace_changed(session_pk=bad_case.session_id)
            locked = BadCase.objects.select_for_update().get(pk=bad_case.pk)
            for name, value in fields.items():
                setattr(locked, name, value)
            if add_note and add_note not in locked.notes:
                locked.notes = f"{locked.notes.rstrip()}\n{add_note}".strip()
                fields.setdefault("notes", locked.notes)
            if "status" in fields:
                if fields["status"] in _CLOSED_STATUSES:
                    locked.closed_at = locked.closed_at or timezone.now()
                else:
                    locked.closed_at = None
            locked.save(update_fields=[*fields, "closed_at", "updated_at"])
    except IntegrityError:
        raise ValidationError(
            {"status": gettext("The session already has another open bad case; close that one first.")}
        ) from None
    return locked


def bad_case_record_miscitation(
    *, session: DiagnosisSession, user: AbstractBaseUser, claim_id: str, ref_id: str
) -> BadCase:
    """ "The evidence existed but was cited wrong": the session's open bad case (opened by the reviewer
    when there is none) gets the miscited-evidence category and is triaged, and its notes name the
    claim and the ref that states it (once). Needs `cases.change_badcase`, like any triage."""
    if not user.has_perm("cases.change_badcase"):
        raise PermissionDenied("Triaging bad cases needs the cases.change_badcase permission.")
    errors = {name: "Required." for name, value in (("claim_id", claim_id), ("ref_id", ref_id)) if not value.strip()}
    if errors:
        raise ValidationError(errors)
    note = gettext("Claim %(claim)s: the evidence is in %(ref)s (evidence existed, cited wrong).") % {
        "claim": claim_id,
        "ref": ref_id,
    }
    with transaction.atomic():
        bad_case = bad_case_open_for_session(session=session, source=BadCaseSource.REVIEWER)
        return bad_case_update(
            bad_case=bad_case,
            user=user,
            category=BadCaseCategory.MISCITED_EVIDENCE,
            status=BadCaseStatus.TRIAGED,
            add_note=note,
        )
