"""Recording a session as the agent reports it: an idempotent upsert on (project, sessionId)."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from diagnosis.models import (
    DiagnosisSession,
    DiagnosisStep,
    EvidenceRef,
    Project,
    ToolInvocation,
)
from diagnosis.services.rows import SessionRows, session_rows_from_payload
from diagnosis.signals import figures_changed

if TYPE_CHECKING:
    from diagnosis.serializers import SessionIngest


@dataclass(frozen=True)
class IngestResult:
    session: DiagnosisSession
    created: bool


def session_upsert(*, project: Project, data: "SessionIngest", trusted_layers: bool = False) -> IngestResult:
    """Create or replace one session with its steps, invocations and evidence refs.

    `data` is the validated payload (`session_ingest_from_body`), stored as the rows of
    `session_rows_from_payload`. Everything happens in one transaction: a replaced session never
    shows a mix of old and new children. The statement count is constant: children are deleted
    by database cascades and inserted in bulk. Evaluation is enqueued after commit.
    `trusted_layers`: the payload's `selfEvaluation` is SelfEval's own export (`import_sessions`),
    not an agent's legacy JSON (`merge.self_evaluation_import`).
    """
    rows = session_rows_from_payload(data=data, trusted_layers=trusted_layers)

    for attempt in range(2):
        try:
            with transaction.atomic():
                session, created = _lock_or_create(project, rows)
                # When it counted before (a re-post may move created_at) and when it counts now.
                moments = [(session.project_id, session.created_at)]
                if not created:
                    # Children go in one statement each thanks to ON DELETE CASCADE in the database.
                    ToolInvocation.objects.filter(session=session).delete()
                    DiagnosisStep.objects.filter(session=session).delete()
                    for name, value in rows.session.items():
                        setattr(session, name, value)
                    session.trace_version += 1  # under the row lock: no other write can count in between
                    session.save(update_fields=[*rows.session, "trace_version", "updated_at"])
                children = rows.children(session=session)
                DiagnosisStep.objects.bulk_create(children.steps)
                ToolInvocation.objects.bulk_create(children.invocations)
                EvidenceRef.objects.bulk_create(children.refs)
                moments.append((session.project_id, session.created_at))
                figures_changed.send(sender=DiagnosisSession, moments=moments)
                transaction.on_commit(lambda pk=session.pk: _enqueue_evaluation(pk))
            return IngestResult(session=session, created=created)
        except IntegrityError:
            # A concurrent request created the same sessionId between our read and insert:
            # the retry finds it and replaces it instead.
            if attempt:
                raise
    raise AssertionError("unreachable")


def _lock_or_create(project: Project, rows: SessionRows) -> tuple[DiagnosisSession, bool]:
    session = (
        DiagnosisSession.objects.select_for_update(of=("self",))
        .select_related("project")
        .filter(project=project, session_id=rows.session_id)
        .first()
    )
    if session is not None:
        return session, False
    session = DiagnosisSession.objects.create(project=project, session_id=rows.session_id, **rows.session)
    return session, True


def _enqueue_evaluation(session_pk: int) -> None:
    from diagnosis.tasks import evaluate_session

    evaluate_session.enqueue(session_pk)
