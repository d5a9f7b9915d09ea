"""Building the producers' plain `SessionData`: from the database, or from an ingestion payload.

Both converters produce the same `SessionData` for the same session (a test holds them to it), so
the regression harness, which never touches the database, judges exactly what production judges.
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from diagnosis.evaluation_layers import self_evaluation_read
from diagnosis.models import DiagnosisSession, EvidenceRef, ToolInvocation
from diagnosis.services.ingestion import detect_language, evidence_fingerprint, sha256_text
from diagnosis.services.producers.types import InvocationData, RefData, SessionData


def _previous_verifier_state(self_evaluation: Any) -> tuple[int, str]:
    """(round, evidence fingerprint) of the stored verifier layer; (0, "") when there is none.

    A new evidence fingerprint makes the verifier start round `previous_round + 1`; the same
    fingerprint keeps the round, so re-running an evaluation never inflates it.
    """
    layer = self_evaluation_read(self_evaluation).verifier
    if layer is None:
        return 0, ""
    return max(0, layer.round or 0), layer.evidence_fingerprint or ""


def session_data_from_models(
    *, session: DiagnosisSession, invocations: Iterable[ToolInvocation], refs: Iterable[EvidenceRef]
) -> SessionData:
    """`SessionData` from rows already loaded (no query here): invocations and refs of `session`."""
    refs_by_invocation: dict[int, list[EvidenceRef]] = defaultdict(list)
    for ref in refs:
        refs_by_invocation[ref.invocation_id].append(ref)
    invocation_data = []
    for inv in sorted(invocations, key=lambda row: row.position):
        inv_refs = sorted(refs_by_invocation.get(inv.pk, ()), key=lambda row: row.position)
        invocation_data.append(
            InvocationData(
                invocation_id=inv.invocation_id,
                step_index=inv.step_index,
                tool_name=inv.tool_name,
                status=inv.status,
                arguments=inv.arguments or {},
                output=inv.output,
                error=inv.error or "",
                latency_ms=inv.latency_ms,
                match_level=inv.match_level,
                refs=tuple(
                    RefData(
                        ref_id=ref.ref_id,
                        source=ref.source,
                        content=ref.content,
                        content_sha256=ref.content_sha256,
                        invocation_id=inv.invocation_id,
                    )
                    for ref in inv_refs
                ),
            )
        )
    previous_round, previous_fingerprint = _previous_verifier_state(session.self_evaluation)
    return SessionData(
        session_id=session.session_id,
        mode=session.mode,
        language=session.language,
        query=session.query,
        answer=session.answer,
        status=session.status,
        alert=session.alert,
        active_alerts=list(session.active_alerts or []),
        executor_output=session.executor_output,
        invocations=tuple(invocation_data),
        evidence_fingerprint=session.evidence_fingerprint,
        previous_round=previous_round,
        previous_evidence_fingerprint=previous_fingerprint,
    )


def session_data_from_payload(
    *, data: dict[str, Any], previous_round: int = 0, previous_evidence_fingerprint: str = ""
) -> SessionData:
    """`SessionData` from a validated `SessionIngestSerializer` payload, without the database.

    Mirrors what `session_upsert` stores (language detection, `error` None -> "", ref hashes and
    the evidence fingerprint), so a fixture is judged as if it had been ingested.
    """
    invocation_data = []
    hashes: list[str] = []
    for inv in data["toolInvocations"]:
        details = inv.get("retrievalDetails") or {}
        refs = []
        for ref in details.get("evidenceRefs", ()):
            digest = sha256_text(ref["content"])
            hashes.append(digest)
            refs.append(
                RefData(
                    ref_id=ref["refId"],
                    source=ref.get("source", ""),
                    content=ref["content"],
                    content_sha256=digest,
                    invocation_id=inv["invocationId"],
                )
            )
        invocation_data.append(
            InvocationData(
                invocation_id=inv["invocationId"],
                step_index=inv.get("stepIndex"),
                tool_name=inv["toolName"],
                status=inv["status"],
                arguments=inv.get("arguments") or {},
                output=inv.get("output"),
                error=inv.get("error") or "",
                latency_ms=inv.get("latencyMs"),
                match_level=details.get("matchLevel", ""),
                refs=tuple(refs),
            )
        )
    return SessionData(
        session_id=data["sessionId"],
        mode=data["mode"],
        language=detect_language(data["query"]),
        query=data["query"],
        answer=data.get("answer", ""),
        status=data["status"],
        alert=data.get("alert"),
        active_alerts=list(data.get("activeAlerts") or []),
        executor_output=data.get("executorOutput"),
        invocations=tuple(invocation_data),
        evidence_fingerprint=evidence_fingerprint(hashes),
        previous_round=previous_round,
        previous_evidence_fingerprint=previous_evidence_fingerprint,
    )
