"""The case library: cases from useful answers or written by hand, edited and reviewed by staff.

Every write records a `CaseRevision` (who, when, field -> [old, new]) in the same transaction.
"""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from cases.models import Case, CaseRevision, CaseRevisionAction, CaseSourceType, CaseStatus, FaultCategory
from cases.services.extraction import case_fields_extract
from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession
from diagnosis.services.trace_version import session_trace_changed

# Fields staff may set by hand (manual cases, edits); everything else is bookkeeping.
EDITABLE_FIELDS = ("title", "query", "root_cause", "solution", "fault_category", "error_code", "service")
_MAX_LENGTHS = {"title": 100, "error_code": 100, "service": 200}


def case_create_from_session(*, session: DiagnosisSession, created_by: str = "system") -> Case:
    """The session's case, created from it when there is none (seed document 000's createFromSession).

    Idempotent and race-safe: the partial unique index on `session` lets exactly one insert win;
    a loser rolls back its savepoint and returns the winner's row. Mapping (seed document 000, section 8):
    caseId = new UUID, diagnosisId = sessionId, sourceType AUTO, title = first 100 characters of
    the query, faultCategory / errorCode / service / rootCause / solution extracted from the
    answer (see cases.services.extraction; rootCause and solution fall back to the answer).
    """
    existing = Case.objects.filter(session_id=session.pk).first()
    if existing is not None:
        return existing
    # The caller may hold a slimmed-down session (feedback loads only what it needs).
    full = DiagnosisSession.objects.only(
        "pk", "project_id", "session_id", "query", "answer", "alert_name", "alert_service"
    ).get(pk=session.pk)
    extracted = case_fields_extract(
        query=full.query, answer=full.answer, alert_name=full.alert_name, alert_service=full.alert_service
    )
    try:
        with transaction.atomic():
            session_trace_changed(session_pk=full.pk)
            case = Case.objects.create(
                project_id=full.project_id,
                session_id=full.pk,
                diagnosis_id=full.session_id,
                source_type=CaseSourceType.AUTO,
                fault_category=extracted.fault_category,
                title=full.query[:100],
                query=full.query,
                root_cause=extracted.root_cause,
                solution=extracted.solution,
                error_code=extracted.error_code,
                service=extracted.service,
                created_by=created_by,
            )
            CaseRevision.objects.create(
                case=case, action=CaseRevisionAction.CREATE, changes={"source_type": [None, CaseSourceType.AUTO]}
            )
            return case
    except IntegrityError:
        # A concurrent request created it between our read and our insert.
        return Case.objects.get(session_id=session.pk)


def case_create_manual(*, user: AbstractBaseUser, project: Project, **fields: Any) -> Case:
    """A case written by staff (sourceType MANUAL, pending review). Needs `cases.add_case`."""
    if not user.has_perm("cases.add_case"):
        raise PermissionDenied("Adding cases needs the cases.add_case permission.")
    values = case_fields_clean(fields)
    if not values.get("title", "").strip():
        raise ValidationError({"title": "A manual case needs a title."})
    with transaction.atomic():
        case = Case.objects.create(
            project=project,
            source_type=CaseSourceType.MANUAL,
            created_by=user.get_username(),
            **values,
        )
        CaseRevision.objects.create(
            case=case,
            editor=user,
            action=CaseRevisionAction.CREATE,
            changes={name: [None, value] for name, value in values.items()},
        )
    return case


def case_update(*, case: Case, user: AbstractBaseUser, changes: dict[str, Any]) -> Case:
    """Apply `changes` (editable fields only) and record what changed. Needs `cases.change_case`.

    Old values are read under a row lock, so two editors never record the same old value.
    Returns the case unchanged (and records nothing) when no value actually differs.
    """
    if not user.has_perm("cases.change_case"):
        raise PermissionDenied("Editing cases needs the cases.change_case permission.")
    values = case_fields_clean(changes)
    with transaction.atomic():
        _trace_changed(case)
        locked = Case.objects.select_for_update().get(pk=case.pk)
        diff = {
            name: [getattr(locked, name), value] for name, value in values.items() if getattr(locked, name) != value
        }
        if diff:
            for name, (_old, new) in diff.items():
                setattr(locked, name, new)
            locked.save(update_fields=[*diff, "updated_at"])
            CaseRevision.objects.create(case=locked, editor=user, action=CaseRevisionAction.EDIT, changes=diff)
    return locked


def case_approve(*, case: Case, user: AbstractBaseUser, note: str = "", changes: dict[str, Any] | None = None) -> Case:
    """Mark the case approved by `user`. Needs `cases.approve_case`.

    With `changes`, the edits are applied first (as `case_update`, which needs `cases.change_case`)
    in the same transaction: the case is approved as edited, or nothing is written.
    """
    return _case_review(case=case, user=user, status=CaseStatus.APPROVED, note=note, changes=changes)


def case_reject(*, case: Case, user: AbstractBaseUser, note: str = "", changes: dict[str, Any] | None = None) -> Case:
    """Mark the case rejected by `user`. Needs `cases.approve_case`; `changes` as in `case_approve`."""
    return _case_review(case=case, user=user, status=CaseStatus.REJECTED, note=note, changes=changes)


def _case_review(*, case: Case, user: AbstractBaseUser, status: str, note: str, changes: dict[str, Any] | None) -> Case:
    if not user.has_perm("cases.approve_case"):
        raise PermissionDenied("Approving or rejecting cases needs the cases.approve_case permission.")
    if not isinstance(note, str):
        raise ValidationError({"review_note": "Must be text."})
    note = note.replace("\r\n", "\n").replace("\r", "\n")
    with transaction.atomic():
        _trace_changed(case)
        if changes:
            case_update(case=case, user=user, changes=changes)
        locked = Case.objects.select_for_update().get(pk=case.pk)
        decision = {"status": [locked.status, status]}
        if note != locked.review_note:
            decision["review_note"] = [locked.review_note, note]
        locked.status = status
        locked.review_note = note
        locked.reviewed_by = user
        locked.reviewed_at = timezone.now()
        locked.save(update_fields=["status", "review_note", "reviewed_by", "reviewed_at", "updated_at"])
        CaseRevision.objects.create(
            case=locked,
            editor=user,
            action=CaseRevisionAction.APPROVE if status == CaseStatus.APPROVED else CaseRevisionAction.REJECT,
            changes=decision,
        )
    return locked


def _trace_changed(case: Case) -> None:
    """A case of a session shows in the session's trace (a case written by hand has none). Before the
    case's row lock: the session's row first, as a vote takes them."""
    if case.session_id is not None:
        session_trace_changed(session_pk=case.session_id)


def case_fields_clean(fields: dict[str, Any]) -> dict[str, Any]:
    """The editable fields as stored (line ends normalised), or ValidationError naming each bad one.

    The case form runs it in `clean()`, so a refused save shows the form again with what was typed."""
    unknown = sorted(set(fields) - set(EDITABLE_FIELDS))
    if unknown:
        raise ValidationError(f"Not editable case fields: {', '.join(unknown)}")
    errors: dict[str, str] = {}
    values: dict[str, Any] = {}
    for name, value in fields.items():
        if not isinstance(value, str):
            errors[name] = "Must be text."
            continue
        # Browsers send textareas with CRLF: store LF, so a resubmitted text compares equal and
        # no phantom edit is recorded.
        value = value.replace("\r\n", "\n").replace("\r", "\n")
        if name in _MAX_LENGTHS and len(value) > _MAX_LENGTHS[name]:
            errors[name] = f"At most {_MAX_LENGTHS[name]} characters."
            continue
        if name == "fault_category" and value not in FaultCategory.values:
            errors[name] = f"Unknown fault category {value!r}; one of {', '.join(FaultCategory.values)}."
            continue
        values[name] = value
    if errors:
        raise ValidationError(errors)
    return values


def cases_merge(*, cases: list[Case], user: AbstractBaseUser) -> tuple[Case, list[Case]]:
    """Keep one of duplicate cases and reject the others as its duplicates; (kept, rejected).

    The cases must be two or more of one project with the same `duplicate_key`. The kept one is
    the approved one reviewed last, else the oldest; the others not already rejected are rejected
    (as `case_reject`, a revision each) with a note naming the kept case. Needs `cases.approve_case`.
    """
    if not user.has_perm("cases.approve_case"):
        raise PermissionDenied("Merging cases needs the cases.approve_case permission.")
    if len(cases) < 2:
        raise ValidationError(gettext("Select two or more duplicate cases to merge."))
    if len({(case.project_id, case.duplicate_key) for case in cases}) > 1:
        raise ValidationError(
            gettext("Only duplicates merge: the selected cases differ in question, service or error code.")
        )
    approved = [case for case in cases if case.status == CaseStatus.APPROVED]
    if approved:
        kept = max(approved, key=lambda case: (case.reviewed_at or case.created_at, str(case.pk)))
    else:
        kept = min(cases, key=lambda case: (case.created_at, str(case.pk)))
    note = gettext("Duplicate of case “%(title)s” (%(id)s).") % {"title": kept.title, "id": kept.pk}
    with transaction.atomic():
        rejected = [
            case_reject(case=case, user=user, note=note)
            for case in sorted(cases, key=lambda case: (case.created_at, str(case.pk)))
            if case.pk != kept.pk and case.status != CaseStatus.REJECTED
        ]
    return kept, rejected
