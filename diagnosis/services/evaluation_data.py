"""Building the producers' plain `SessionData` from a session's columns.

One conversion, `_session_data`, over the columns of a session and its invocations and refs:
read from the stored rows (`session_data_from_models`, the evaluation) or taken from the rows an
ingestion payload maps to (`session_data_from_rows`, the regression harness, which never touches
the database). The harness judges exactly what production judges: the same columns, the same
conversion.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from diagnosis.constants import Layer
from diagnosis.evaluation_layers import ROUND_MAX, self_evaluation_read
from diagnosis.models import DiagnosisSession, EvidenceRef, ToolInvocation
from diagnosis.services.producers.types import InvocationData, RefData, SessionData
from diagnosis.services.rows import SessionRows, session_rows_from_payload

if TYPE_CHECKING:
    from diagnosis.serializers import SessionIngest


def _previous_verifier_state(self_evaluation: Any) -> tuple[int, str]:
    """(round, evidence fingerprint) of the verifier layer SelfEval stored; (0, "") when there is
    none. A legacy layer's round is the agent's history and numbers nothing.

    A new evidence fingerprint makes the verifier start round `previous_round + 1`; the same
    fingerprint keeps the round, so re-running an evaluation never inflates it.
    """
    layer = self_evaluation_read(self_evaluation).produced(Layer.VERIFIER)
    # A round at the column's end cannot be followed (only a layer an agent sent before its
    # layers were marked legacy holds one): the numbering restarts after the stored claim checks.
    if layer is None or (layer.round or 0) >= ROUND_MAX:
        return 0, ""
    return max(0, layer.round or 0), layer.evidence_fingerprint or ""


# The columns SessionData is built from (the evaluation loads exactly these, plus its own).
SESSION_COLUMNS = (
    "session_id",
    "mode",
    "language",
    "query",
    "answer",
    "status",
    "alert",
    "active_alerts",
    "executor_output",
    "evidence_fingerprint",
    "self_evaluation",
)
_INVOCATION_COLUMNS = (
    "invocation_id",
    "step_index",
    "tool_name",
    "status",
    "arguments",
    "output",
    "error",
    "latency_ms",
    "match_level",
)
_REF_COLUMNS = ("ref_id", "source", "content", "content_sha256")

_Columns = Mapping[str, Any]


def session_data_from_models(
    *, session: DiagnosisSession, invocations: Iterable[ToolInvocation], refs: Iterable[EvidenceRef]
) -> SessionData:
    """`SessionData` from rows already loaded (no query here): invocations and refs of `session`."""
    refs_by_invocation: dict[int, list[EvidenceRef]] = defaultdict(list)
    for ref in refs:
        refs_by_invocation[ref.invocation_id].append(ref)
    return _session_data(
        session=_columns(session, SESSION_COLUMNS),
        invocations=[
            (
                _columns(inv, _INVOCATION_COLUMNS),
                [_columns(ref, _REF_COLUMNS) for ref in sorted(refs_by_invocation[inv.pk], key=_position)],
            )
            for inv in sorted(invocations, key=_position)
        ],
    )


def session_data_from_rows(*, rows: SessionRows) -> SessionData:
    """`SessionData` from the rows a payload maps to, without the database."""
    return _session_data(
        session={"session_id": rows.session_id, **rows.session},
        invocations=zip(rows.invocations, rows.refs, strict=True),
    )


def session_data_from_payload(*, data: "SessionIngest") -> SessionData:
    """`SessionData` from a validated payload (`session_ingest_from_body`), as if it had been ingested."""
    return session_data_from_rows(rows=session_rows_from_payload(data=data))


def _session_data(*, session: _Columns, invocations: Iterable[tuple[_Columns, Iterable[_Columns]]]) -> SessionData:
    """The conversion itself: session columns, and each invocation's columns with its refs', in order.

    Columns a payload leaves at the model default may be absent (`self_evaluation`).
    """
    previous_round, previous_fingerprint = _previous_verifier_state(session.get("self_evaluation"))
    return SessionData(
        session_id=session["session_id"],
        mode=session["mode"],
        language=session["language"],
        query=session["query"],
        answer=session["answer"],
        status=session["status"],
        alert=session["alert"],
        active_alerts=list(session["active_alerts"] or []),
        executor_output=session["executor_output"],
        invocations=tuple(
            InvocationData(
                invocation_id=inv["invocation_id"],
                step_index=inv["step_index"],
                tool_name=inv["tool_name"],
                status=inv["status"],
                arguments=inv["arguments"] or {},
                output=inv["output"],
                error=inv["error"] or "",
                latency_ms=inv["latency_ms"],
                match_level=inv["match_level"],
                refs=tuple(
                    RefData(
                        ref_id=ref["ref_id"],
                        source=ref["source"],
                        content=ref["content"],
                        content_sha256=ref["content_sha256"],
                        invocation_id=inv["invocation_id"],
                    )
                    for ref in refs
                ),
            )
            for inv, refs in invocations
        ),
        evidence_fingerprint=session["evidence_fingerprint"],
        previous_round=previous_round,
        previous_evidence_fingerprint=previous_fingerprint,
    )


def _columns(row: DiagnosisSession | ToolInvocation | EvidenceRef, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(row, name) for name in names}


def _position(row: ToolInvocation | EvidenceRef) -> int:
    return row.position
