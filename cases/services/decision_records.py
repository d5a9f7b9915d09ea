"""The cases app's decision records: cases with their review and revisions, bad cases with their triage.

Writers and readers as in `diagnosis.services.decision_records` (composed by `backoffice.decisions`):
the stored state is written as the record has it, never by replaying the approval or the triage.
"""

import uuid
from collections.abc import Iterator
from typing import Any

from django.db.models import Prefetch

from cases.models import (
    OPEN_BAD_CASE_STATUSES,
    BadCase,
    BadCaseCategory,
    BadCaseSource,
    BadCaseStatus,
    Case,
    CaseRevision,
    CaseRevisionAction,
    CaseSourceType,
    CaseStatus,
    FaultCategory,
)
from core.tenancy.models import Project
from core.text import json_sorted_keys
from diagnosis.models import DiagnosisSession, VerifierVerdict
from diagnosis.services.export import instant_text
from diagnosis.services.records import Record, References, username_of


def case_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    """Every case, oldest first, with its review and its revisions (oldest first)."""
    revisions = CaseRevision.objects.select_related("editor").order_by("created_at", "pk")
    cases = Case.objects.select_related("project", "session", "reviewed_by").prefetch_related(
        Prefetch("revisions", queryset=revisions)
    )
    if project is not None:
        cases = cases.filter(project=project)
    for case in cases.order_by("created_at", "pk").iterator(chunk_size=500):
        yield {
            "id": str(case.pk),
            "project": case.project.slug,
            "sessionId": case.session.session_id if case.session is not None else None,
            "diagnosisId": case.diagnosis_id,
            "sourceType": case.source_type,
            "faultCategory": case.fault_category,
            "title": case.title,
            "query": case.query,
            "rootCause": case.root_cause,
            "solution": case.solution,
            "errorCode": case.error_code,
            "service": case.service,
            "createdBy": case.created_by,
            "status": case.status,
            "reviewedBy": username_of(case.reviewed_by),
            "reviewedAt": instant_text(case.reviewed_at),
            "reviewNote": case.review_note,
            "createdAt": instant_text(case.created_at),
            "updatedAt": instant_text(case.updated_at),
            "revisions": [
                {
                    "action": revision.action,
                    "editor": username_of(revision.editor),
                    "changes": json_sorted_keys(revision.changes),
                    "createdAt": instant_text(revision.created_at),
                }
                for revision in case.revisions.all()
            ],
        }


def case_store(*, record: Record, references: References) -> bool:
    """The case of the record's `id`, created or set to the record's fields; its revisions that are
    missing (by createdAt and action) are added, the others stay."""
    try:
        case_id = uuid.UUID(record.text("id"))
    except ValueError:
        raise record.error("id", "not a UUID") from None
    project = references.project(record)
    session = references.optional_session(record, project)
    values = {
        "project_id": project.pk,
        "session_id": session.pk if session is not None else None,
        "diagnosis_id": record.text("diagnosisId", max_length=128),
        "source_type": record.choice("sourceType", CaseSourceType),
        "fault_category": record.choice("faultCategory", FaultCategory),
        "title": record.text("title", max_length=100),
        "query": record.text("query"),
        "root_cause": record.text("rootCause"),
        "solution": record.text("solution"),
        "error_code": record.text("errorCode", max_length=100),
        "service": record.text("service", max_length=200),
        "created_by": record.text("createdBy", max_length=150),
        "status": record.choice("status", CaseStatus),
        "reviewed_by_id": _pk(references.user(record, "reviewedBy")),
        "reviewed_at": record.optional_instant("reviewedAt"),
        "review_note": record.text("reviewNote"),
        "created_at": record.instant("createdAt"),
        "updated_at": record.instant("updatedAt"),
    }
    revisions = [
        {
            "action": revision.choice("action", CaseRevisionAction),
            "editor_id": _pk(references.user(revision, "editor")),
            "changes": revision.mapping("changes"),
            "created_at": revision.instant("createdAt"),
        }
        for revision in record.records("revisions")
    ]
    if session is not None:
        other = Case.objects.filter(session_id=session.pk).exclude(pk=case_id).values_list("pk", flat=True).first()
        if other is not None:
            raise record.error("sessionId", f"the session already has another case, {other}")

    rows = Case.objects.filter(pk=case_id)
    current = rows.values(*values).first()
    changed = current != values
    if changed:
        # The case shows in its session's trace, and leaves the trace of a session it had: the sessions'
        # rows before the case's, as a vote takes them. (Its revisions are not in the trace.)
        before = current["session_id"] if current is not None else None
        for session_pk in sorted({values["session_id"], before} - {None}):
            references.trace_changed(session_pk)
    if current is None:
        Case.objects.create(id=case_id, **values)
    if changed:
        rows.update(**values)  # the timestamps are auto_now(_add): set after the insert
    stored = set(CaseRevision.objects.filter(case_id=case_id).values_list("created_at", "action"))
    for revision in revisions:
        if (revision["created_at"], revision["action"]) in stored:
            continue
        added = CaseRevision.objects.create(case_id=case_id, **revision)
        CaseRevision.objects.filter(pk=added.pk).update(created_at=revision["created_at"])
        changed = True
    return changed


def bad_case_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    bad_cases = BadCase.objects.select_related("project", "session", "assignee")
    if project is not None:
        bad_cases = bad_cases.filter(project=project)
    for bad_case in bad_cases.order_by("created_at", "pk").iterator(chunk_size=500):
        yield {
            "project": bad_case.project.slug,
            "sessionId": bad_case.session.session_id,
            "source": bad_case.source,
            "status": bad_case.status,
            "category": bad_case.category or None,
            "assignee": username_of(bad_case.assignee),
            "notes": bad_case.notes,
            "verifierVerdict": bad_case.verifier_verdict or None,
            "feedbackCount": bad_case.feedback_count,
            "createdAt": instant_text(bad_case.created_at),
            "updatedAt": instant_text(bad_case.updated_at),
            "closedAt": instant_text(bad_case.closed_at),
        }


def bad_case_store(*, record: Record, references: References) -> bool:
    """The bad case of the record's session, source and createdAt, created or set to the record's
    triage; the verifier's bad case is found by session and source alone (it opens once per session).

    A record of an open bad case is refused when the session has another open one, unless that one
    is an untouched bad case the verifier opened (no triage, no report), which is deleted: the
    evaluation of the imported session opened it, for a REJECT the exported bad case had taken in.
    """
    session = references.session(record)
    source = record.choice("source", BadCaseSource)
    created_at = record.instant("createdAt")
    values = {
        "project_id": session.project_id,
        "source": source,
        "status": record.choice("status", BadCaseStatus),
        "category": record.choice("category", BadCaseCategory, blank=True),
        "assignee_id": _pk(references.user(record, "assignee")),
        "notes": record.text("notes"),
        "verifier_verdict": record.choice("verifierVerdict", VerifierVerdict, blank=True),
        "feedback_count": record.count("feedbackCount"),
        "created_at": created_at,
        "updated_at": record.instant("updatedAt"),
        "closed_at": record.optional_instant("closedAt"),
    }
    same = BadCase.objects.filter(session_id=session.pk, source=source)
    if source != BadCaseSource.VERIFIER:
        same = same.filter(created_at=created_at)
    pk = same.order_by("pk").values_list("pk", flat=True).first()
    rows = BadCase.objects.filter(pk=pk)
    current = rows.values(*values).first() if pk is not None else None
    if current == values:
        return False  # and if open, it is the session's one open bad case: nothing to make way for
    # The trace shows the session's bad case: the session's row before its bad cases' (deleted or
    # written), as a vote takes them.
    references.trace_changed(session.pk)
    if values["status"] in OPEN_BAD_CASE_STATUSES:
        _make_way_for_open(record=record, session=session, keep_pk=pk)
    if current is None:
        rows = BadCase.objects.filter(pk=BadCase.objects.create(session_id=session.pk, **values).pk)
    rows.update(**values)  # the timestamps are auto_now(_add): set after the insert
    return True


def _make_way_for_open(*, record: Record, session: DiagnosisSession, keep_pk: int | None) -> None:
    others = BadCase.objects.filter(session_id=session.pk, status__in=OPEN_BAD_CASE_STATUSES).exclude(pk=keep_pk)
    for other in others:
        untouched = (
            other.source == BadCaseSource.VERIFIER
            and other.status == BadCaseStatus.OPEN
            and not (other.category or other.notes or other.assignee_id or other.feedback_count)
        )
        if not untouched:
            raise record.error("status", f"the session already has another open bad case, #{other.pk}; close it first")
        other.delete()


def _pk(user) -> int | None:
    return None if user is None else user.pk
