"""Tool trace summary: a compact navigation index of the calls, in call order.

One entry per invocation: invocationId, tool, status, matchLevel (null for non-retrieval calls),
refIds, latencyMs, stepIndex, and `citedBy`: the claims whose evidence bindings name one of its
refs (or the call itself), so a reviewer can jump from a claim to the call that backs it.
"""

from typing import Any

from .types import InvocationData


def tool_trace_summary(
    *, invocations: tuple[InvocationData, ...], cited: dict[str, list[str]] | None = None
) -> list[dict[str, Any]]:
    """`cited` maps a refId (or invocationId) to the claim ids that cite it."""
    cited = cited or {}
    summary = []
    for inv in invocations:
        ref_ids = [ref.ref_id for ref in inv.refs]
        claims = [c for key in (inv.invocation_id, *ref_ids) for c in cited.get(key, ())]
        summary.append(
            {
                "invocationId": inv.invocation_id,
                "tool": inv.tool_name,
                "status": inv.status,
                "matchLevel": inv.match_level or None,
                "refIds": ref_ids,
                "latencyMs": inv.latency_ms,
                "stepIndex": inv.step_index,
                "citedBy": list(dict.fromkeys(claims)),
            }
        )
    return summary
