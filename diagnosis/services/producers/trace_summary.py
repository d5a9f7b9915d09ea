"""Tool trace summary: a compact navigation index of the calls, in call order.

One entry per invocation: invocationId, tool, status, matchLevel (null for non-retrieval calls),
refIds, latencyMs, stepIndex, and `citedBy`: the claims whose evidence bindings name one of its
refs (or the call itself), so a reviewer can jump from a claim to the call that backs it.
"""

from diagnosis.evaluation_layers import ToolTraceEntry

from .types import InvocationData


def tool_trace_summary(
    *, invocations: tuple[InvocationData, ...], cited: dict[str, list[str]] | None = None
) -> list[ToolTraceEntry]:
    """`cited` maps a refId (or invocationId) to the claim ids that cite it."""
    cited = cited or {}
    summary = []
    for inv in invocations:
        ref_ids = [ref.ref_id for ref in inv.refs]
        claims = [c for key in (inv.invocation_id, *ref_ids) for c in cited.get(key, ())]
        summary.append(
            ToolTraceEntry(
                invocation_id=inv.invocation_id,
                tool=inv.tool_name,
                status=inv.status,
                match_level=inv.match_level or None,
                ref_ids=ref_ids,
                latency_ms=inv.latency_ms,
                step_index=inv.step_index,
                cited_by=list(dict.fromkeys(claims)),
            )
        )
    return summary
