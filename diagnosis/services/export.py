"""A stored session as its ingestion payload: the rows -> payload direction of `POST /api/sessions`.

`session_payload` is the one exporter of a stored session: `export_sessions` writes it as JSONL
and the evaluation fixtures (`cases.services.eval_export`) embed it. Its output is what
`session_ingest_from_body` accepts (the `SessionIngest` Struct), and ingesting it stores the same rows again, so
export -> import -> export gives the same bytes:

- every key of the Struct is present (absent values are null), in the Struct's order;
- instants are UTC ISO 8601 with a `Z`, to the microsecond;
- the keys of stored JSON values are sorted, since PostgreSQL's jsonb does not keep their order;
- `error` is null for a call without one (ingestion stores null as "");
- `selfEvaluation` is the stored layered container (null when empty). `import_sessions` takes it
  as SelfEval's own (`session_upsert(trusted_layers=True)`; only legacy root keys move), so the
  verdicts, the verifier round and its evidence fingerprint travel with the session, and
  re-evaluating the imported session continues the same round instead of starting a new one.
  The API never does: there every layer an agent sends is legacy (`diagnosis.evaluation_layers`).
"""

import datetime as dt
from typing import Any

from django.db.models import Prefetch

from core.text import json_sorted_keys
from diagnosis.models import DiagnosisSession, DiagnosisStep, EvidenceRef, ToolInvocation

# The session columns `session_payload` reads; the evaluation bookkeeping can stay in the database.
PAYLOAD_FIELDS = (
    "pk",
    "session_id",
    "conversation_id",
    "mode",
    "query",
    "answer",
    "status",
    "error",
    "created_at",
    "finished_at",
    "alert",
    "active_alerts",
    "executor_output",
    "self_evaluation",
)


def payload_prefetches() -> tuple[Prefetch, ...]:
    """What `session_payload` reads besides the session row: three queries for any number of sessions."""
    return (
        Prefetch("steps", queryset=DiagnosisStep.objects.order_by("index")),
        Prefetch(
            "invocations",
            queryset=ToolInvocation.objects.order_by("position").prefetch_related(
                Prefetch("evidence_refs", queryset=EvidenceRef.objects.order_by("position"))
            ),
        ),
    )


def session_payload(*, session: DiagnosisSession, with_self_evaluation: bool = True) -> dict[str, Any]:
    """The session as the agent would POST it to /api/sessions, from its stored rows.

    `session` must come with `payload_prefetches()` (no query here). `with_self_evaluation=False`
    leaves SelfEval's own conclusions out (`selfEvaluation` null), for fixtures judged afresh.
    """
    self_evaluation = session.self_evaluation if with_self_evaluation else None
    return {
        "sessionId": session.session_id,
        "conversationId": session.conversation_id or None,
        "mode": session.mode,
        "query": session.query,
        "answer": session.answer,
        "status": session.status,
        "error": session.error or None,
        "createdAt": instant_text(session.created_at),
        "finishedAt": instant_text(session.finished_at),
        "alert": json_sorted_keys(session.alert),
        "activeAlerts": json_sorted_keys(session.active_alerts or []),
        "steps": [
            {
                "index": step.index,
                "name": step.name,
                "status": step.status,
                "detail": json_sorted_keys(step.detail or {}),
            }
            for step in session.steps.all()
        ],
        "toolInvocations": [_invocation_payload(inv) for inv in session.invocations.all()],
        "executorOutput": json_sorted_keys(session.executor_output),
        "selfEvaluation": json_sorted_keys(self_evaluation) or None,
    }


def _invocation_payload(inv: ToolInvocation) -> dict[str, Any]:
    return {
        "invocationId": inv.invocation_id,
        "stepIndex": inv.step_index,
        "toolName": inv.tool_name,
        "status": inv.status,
        "arguments": json_sorted_keys(inv.arguments or {}),
        "output": json_sorted_keys(inv.output),
        "error": inv.error or None,
        "latencyMs": inv.latency_ms,
        "retrievalDetails": {
            "matchLevel": inv.match_level,
            "evidenceRefs": [
                {"refId": ref.ref_id, "source": ref.source, "content": ref.content} for ref in inv.evidence_refs.all()
            ],
        }
        if inv.match_level
        else None,
    }


def instant_text(moment: dt.datetime | None) -> str | None:
    """UTC ISO 8601 with a `Z`, to the microsecond (None stays None): how every export writes an instant."""
    if moment is None:
        return None
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
