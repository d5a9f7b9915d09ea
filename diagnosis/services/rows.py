"""The one mapping from an ingestion payload to the rows that store it.

`session_rows_from_payload` turns a validated payload (`SessionIngest`) into the column
values of its rows: the session (the language detected from the query, the evidence fingerprint
over every ref's SHA-256, a legacy `selfEvaluation` wrapped into its layers), its steps, tool
invocations and evidence refs. Ingestion saves them as model instances (`session_upsert`), the
demo bulk loader streams the values (`demo.seeding`), and the evaluation
regression harness hands them to the conversion the evaluation applies to the stored rows
(`evaluation_data.session_data_from_rows`): what is stored and what is judged are the same
columns by construction.
"""

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
from django.utils import timezone

from core.text import detect_language
from diagnosis.models import DiagnosisSession, DiagnosisStep, EvaluationState, EvidenceRef, ToolInvocation
from diagnosis.services.merge import self_evaluation_import

if TYPE_CHECKING:
    from diagnosis.serializers import SessionIngest


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def evidence_fingerprint(ref_hashes: list[str]) -> str:
    """One hash over every ref's content hash, in order: changes when any evidence changes."""
    return sha256_text("\n".join(ref_hashes)) if ref_hashes else ""


class SessionChildren(NamedTuple):
    steps: list[DiagnosisStep]
    invocations: list[ToolInvocation]
    refs: list[EvidenceRef]


@dataclass(frozen=True)
class SessionRows:
    """Column values by attname of one payload's rows, before any of them has a key.

    `session` holds every session column the payload sets but `project` and `session_id`: what
    replacing a stored session overwrites (its evaluation, feedback and review stay). `steps` and
    `invocations` hold their columns but `session`; `refs[i]` the refs of `invocations[i]`, their
    columns but `session` and `invocation`.
    """

    session_id: str
    session: dict[str, Any]
    steps: list[dict[str, Any]]
    invocations: list[dict[str, Any]]
    refs: list[list[dict[str, Any]]]

    def children(self, *, session: DiagnosisSession) -> SessionChildren:
        """Unsaved instances of the children, pointing at `session`. Each ref points at its
        invocation instance, so bulk_create takes the invocation's key once it has one."""
        invocations = [ToolInvocation(session=session, **columns) for columns in self.invocations]
        return SessionChildren(
            steps=[DiagnosisStep(session=session, **columns) for columns in self.steps],
            invocations=invocations,
            refs=[
                EvidenceRef(session=session, invocation=invocation, **columns)
                for invocation, refs in zip(invocations, self.refs, strict=True)
                for columns in refs
            ],
        )


def session_rows_from_payload(*, data: "SessionIngest", trusted_layers: bool = False) -> SessionRows:
    """The rows that store `data`, a validated payload (`session_ingest_from_body`). Its
    `selfEvaluation` is an agent's legacy JSON unless `trusted_layers` (SelfEval's own export,
    `import_sessions`).

    The session starts PENDING: its evaluation has been requested and not run.
    """
    now = timezone.now()
    invocations, refs, ref_hashes = [], [], []
    for position, inv in enumerate(data.tool_invocations):
        details = inv.retrieval_details
        invocations.append(
            {
                "position": position,
                "invocation_id": inv.invocation_id,
                "step_index": inv.step_index,
                "tool_name": inv.tool_name,
                "status": inv.status,
                "arguments": inv.arguments,
                "output": inv.output,
                "error": inv.error or "",
                "latency_ms": inv.latency_ms,
                "match_level": details.match_level if details else "",
            }
        )
        inv_refs = []
        for ref_position, ref in enumerate(details.evidence_refs if details else ()):
            digest = sha256_text(ref.content)
            ref_hashes.append(digest)
            inv_refs.append(
                {
                    "position": ref_position,
                    "ref_id": ref.ref_id,
                    "source": ref.source,
                    "content": ref.content,
                    "content_sha256": digest,
                }
            )
        refs.append(inv_refs)

    alert = msgspec.to_builtins(data.alert) if data.alert is not None else None
    session: dict[str, Any] = {
        "mode": data.mode,
        "language": detect_language(data.query),
        "query": data.query,
        "answer": data.answer,
        "status": data.status,
        "error": data.error or "",
        "conversation_id": data.conversation_id or "",
        "alert": alert,
        "alert_name": (alert or {}).get("name", ""),
        "alert_service": (alert or {}).get("service", ""),
        "active_alerts": msgspec.to_builtins(data.active_alerts),
        "executor_output": data.executor_output,
        "created_at": data.created_at or now,
        "finished_at": data.finished_at,
        "evaluation_state": EvaluationState.PENDING,
        "evaluation_attempts": 0,
        "evaluation_error": "",
        "evaluation_requested_at": now,
        "evidence_fingerprint": evidence_fingerprint(ref_hashes),
    }
    if data.self_evaluation is not None:
        session.update(self_evaluation_import(raw=data.self_evaluation, trusted=trusted_layers))
    steps = [
        {"index": step.index, "name": step.name, "status": step.status, "detail": step.detail} for step in data.steps
    ]
    return SessionRows(session_id=data.session_id, session=session, steps=steps, invocations=invocations, refs=refs)
