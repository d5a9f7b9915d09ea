"""Recording a session as the agent reports it: an idempotent upsert on (project, sessionId)."""

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from diagnosis.models import (
    DiagnosisSession,
    DiagnosisStep,
    EvaluationState,
    EvidenceRef,
    Project,
    ToolInvocation,
)
from diagnosis.services.merge import self_evaluation_import_legacy

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_language(text: str) -> str:
    """'zh' when the text contains Chinese characters, else 'en'."""
    return "zh" if _CJK.search(text or "") else "en"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def evidence_fingerprint(ref_hashes: list[str]) -> str:
    """One hash over every ref's content hash, in order: changes when any evidence changes."""
    return sha256_text("\n".join(ref_hashes)) if ref_hashes else ""


@dataclass(frozen=True)
class IngestResult:
    session: DiagnosisSession
    created: bool


def session_upsert(*, project: Project, data: dict[str, Any]) -> IngestResult:
    """Create or replace one session with its steps, invocations and evidence refs.

    `data` is the validated `SessionIngestSerializer` output. Everything happens in one
    transaction: a replaced session never shows a mix of old and new children. The statement
    count is constant: children are deleted by database cascades and inserted in bulk.
    Evaluation is enqueued after commit.
    """
    fields, ref_hashes = session_columns(data)

    for attempt in range(2):
        try:
            with transaction.atomic():
                session, created = _lock_or_create(project, data["sessionId"], fields)
                if not created:
                    # Children go in one statement each thanks to ON DELETE CASCADE in the database.
                    ToolInvocation.objects.filter(session=session).delete()
                    DiagnosisStep.objects.filter(session=session).delete()
                    for name, value in fields.items():
                        setattr(session, name, value)
                    session.save(update_fields=[*fields, "updated_at"])
                _insert_children(session, data, ref_hashes)
                transaction.on_commit(lambda pk=session.pk: _enqueue_evaluation(pk))
            return IngestResult(session=session, created=created)
        except IntegrityError:
            # A concurrent request created the same sessionId between our read and insert:
            # the retry finds it and replaces it instead.
            if attempt:
                raise
    raise AssertionError("unreachable")


def _lock_or_create(project: Project, session_id: str, fields: dict[str, Any]) -> tuple[DiagnosisSession, bool]:
    session = (
        DiagnosisSession.objects.select_for_update(of=("self",))
        .select_related("project")
        .filter(project=project, session_id=session_id)
        .first()
    )
    if session is not None:
        return session, False
    session = DiagnosisSession.objects.create(project=project, session_id=session_id, **fields)
    return session, True


def session_columns(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The session's own columns for a validated payload (all but project and sessionId), and
    the SHA-256 of each evidence ref in payload order. The bulk demo loader stores the same."""
    ref_hashes = [
        sha256_text(ref["content"])
        for inv in data["toolInvocations"]
        if inv.get("retrievalDetails")
        for ref in inv["retrievalDetails"]["evidenceRefs"]
    ]
    alert = data.get("alert")
    fields: dict[str, Any] = {
        "mode": data["mode"],
        "language": detect_language(data["query"]),
        "query": data["query"],
        "answer": data["answer"],
        "status": data["status"],
        "alert": alert,
        "alert_name": (alert or {}).get("name", ""),
        "alert_service": (alert or {}).get("service", ""),
        "active_alerts": data["activeAlerts"],
        "executor_output": data.get("executorOutput"),
        "created_at": data.get("createdAt") or timezone.now(),
        "finished_at": data.get("finishedAt"),
        "evaluation_state": EvaluationState.PENDING,
        "evaluation_attempts": 0,
        "evaluation_error": "",
        "evaluation_requested_at": timezone.now(),
        "evidence_fingerprint": evidence_fingerprint(ref_hashes),
    }
    legacy = data.get("selfEvaluation")
    if legacy is not None:
        fields.update(self_evaluation_import_legacy(legacy=legacy))
    return fields, ref_hashes


def _insert_children(session: DiagnosisSession, data: dict[str, Any], ref_hashes: list[str]) -> None:
    DiagnosisStep.objects.bulk_create(
        DiagnosisStep(
            session=session,
            index=step["index"],
            name=step["name"],
            status=step["status"],
            detail=step["detail"],
        )
        for step in data["steps"]
    )
    invocations = ToolInvocation.objects.bulk_create(
        [
            ToolInvocation(
                session=session,
                position=position,
                invocation_id=inv["invocationId"],
                step_index=inv["stepIndex"],
                tool_name=inv["toolName"],
                status=inv["status"],
                arguments=inv["arguments"],
                output=inv["output"],
                error=inv["error"] or "",
                latency_ms=inv.get("latencyMs"),
                match_level=(inv["retrievalDetails"] or {}).get("matchLevel", ""),
            )
            for position, inv in enumerate(data["toolInvocations"])
        ]
    )
    hashes = iter(ref_hashes)
    EvidenceRef.objects.bulk_create(
        EvidenceRef(
            session=session,
            invocation=invocation,
            position=position,
            ref_id=ref["refId"],
            source=ref["source"],
            content=ref["content"],
            content_sha256=next(hashes),
        )
        for invocation, inv in zip(invocations, data["toolInvocations"], strict=True)
        if inv["retrievalDetails"]
        for position, ref in enumerate(inv["retrievalDetails"]["evidenceRefs"])
    )


def _enqueue_evaluation(session_pk: int) -> None:
    from diagnosis.tasks import evaluate_session

    evaluate_session.enqueue(session_pk)
