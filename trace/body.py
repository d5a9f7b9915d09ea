"""The body of `GET /api/trace/<sessionId>`, built as plain values from `trace.selectors.Trace`.

camelCase, the self_evaluation layers structured: read with the typed reader
(`diagnosis.evaluation_layers`) and laid out for reading: rule factors, verifier claim checks with
their facts and gatekeeper bindings, AIOps checks. Claim checks come from the `ClaimCheck` rows of
the latest round when there are any, else from the verifier layer (sessions evaluated before the
rows existed). A stored layer that cannot be read is null here and listed in `invalidLayers`; `raw`
still shows it. `trace.serializers` documents the shape.
"""

import json
from dataclasses import dataclass
from datetime import datetime
from trace.selectors import Row, Trace
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from rest_framework import serializers
from rest_framework.utils.urls import replace_query_param

from diagnosis.constants import Layer
from diagnosis.evaluation_layers import (
    FactCheck,
    GatekeeperBinding,
    JudgeReason,
    SelfEvaluation,
    VerifierEvaluation,
    entries_read,
    layer_json,
    self_evaluation_read,
)

# DRF's own rendering of a datetime (the API's time zone, ISO 8601), as every other answer has it.
_DATETIME = serializers.DateTimeField()


def _datetime(value: datetime | None) -> str | None:
    return _DATETIME.to_representation(value) if value is not None else None


@dataclass(frozen=True, slots=True)
class TraceLinks:
    """Absolute links of one trace answer: to its pages and to the whole of what it previews,
    keeping the caller's `project` choice."""

    request: HttpRequest
    project_slug: str | None

    def route(self, name: str, **kwargs: Any) -> str:
        url = self.request.build_absolute_uri(reverse(name, kwargs=kwargs))
        return f"{url}?{urlencode({'project': self.project_slug})}" if self.project_slug else url

    def page(self, offset: int) -> str:
        return replace_query_param(self.request.build_absolute_uri(), "invocationOffset", offset)


def output_preview(output: Any, limit: int) -> tuple[Any, int]:
    """The output itself when its text (a string, else its JSON) has at most `limit` characters,
    else the first `limit` characters of that text; and the text's length."""
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    if len(text) <= limit:
        return output, len(text)
    return text[:limit], len(text)


def trace_body(trace: Trace, *, links: TraceLinks) -> dict[str, Any]:
    """The whole trace; `views` are seed document 000's three angles on one diagnosis."""
    session, preview_chars = trace.session, settings.SELFEVAL_TRACE_PREVIEW_CHARS
    evaluation = self_evaluation_read(session["self_evaluation"])
    layers = _structured_layers(evaluation, trace.claim_checks)
    return {
        "session": _session(trace),
        "steps": [
            {"index": step["index"], "name": step["name"], "status": step["status"], "detail": step["detail"]}
            for step in trace.steps
        ],
        "toolInvocations": [
            _invocation(invocation, trace.head.session_id, links, preview_chars) for invocation in trace.invocations
        ],
        "toolInvocationsPage": _page(trace, links),
        "feedback": session["feedback"] or None,
        "hasFeedback": bool(session["feedback"]),
        "hasRuleEvaluation": evaluation.rule is not None,
        "hasVerifierEvaluation": evaluation.verifier is not None,
        "hasAiOpsRuleEvaluation": evaluation.aiops is not None,
        "selfEvaluation": layers,
        "views": _views(trace, evaluation, layers),
        "conversation": _conversation(trace),
    }


def _session(trace: Trace) -> dict[str, Any]:
    head, session = trace.head, trace.session
    return {
        "sessionId": head.session_id,
        "conversationId": head.conversation_id or None,
        "project": head.project_slug,
        "mode": session["mode"],
        "language": session["language"],
        "query": session["query"],
        "status": session["status"],
        "feedback": session["feedback"] or None,
        "createdAt": _datetime(session["created_at"]),
        "finishedAt": _datetime(session["finished_at"]),
        "evidenceScore": session["evidence_score"],
        "verifierVerdict": session["verifier_verdict"] or None,
        "groundednessScore": session["groundedness_score"],
        "aiopsVerdict": session["aiops_verdict"] or None,
        "failureAttribution": session["failure_attribution"] or None,
        "evaluationState": session["evaluation_state"],
        "answer": session["answer"],
        "error": session["error"] or None,
        "alert": session["alert"],
        "activeAlerts": session["active_alerts"],
        "executorOutput": session["executor_output"],
        "evaluatedAt": _datetime(session["evaluated_at"]),
        "evaluationError": session["evaluation_error"],
    }


def _invocation(invocation: Row, session_id: str, links: TraceLinks, preview_chars: int) -> dict[str, Any]:
    output, chars = output_preview(invocation["output"], preview_chars)
    position = invocation["position"]
    retrieval = (
        {
            "matchLevel": invocation["match_level"],
            "evidenceRefs": [
                {
                    "refId": ref["ref_id"],
                    "source": ref["source"],
                    "content": ref["content_preview"],
                    "contentTruncated": ref["content_chars"] > len(ref["content_preview"]),
                    "contentChars": ref["content_chars"],
                    "contentSha256": ref["content_sha256"],
                    "contentUrl": links.route(
                        "trace-ref", session_id=session_id, position=position, ref_position=ref["position"]
                    ),
                }
                for ref in invocation["refs"]
            ],
        }
        if invocation["match_level"]
        else None
    )
    return {
        "invocationId": invocation["invocation_id"],
        "stepIndex": invocation["step_index"],
        "toolName": invocation["tool_name"],
        "status": invocation["status"],
        "arguments": invocation["arguments"],
        "output": output,
        "error": invocation["error"],
        "latencyMs": invocation["latency_ms"],
        "retrievalDetails": retrieval,
        "outputTruncated": chars > preview_chars,
        "outputChars": chars,
        "outputUrl": links.route("trace-invocation-output", session_id=session_id, position=position),
    }


def _page(trace: Trace, links: TraceLinks) -> dict[str, Any]:
    page = trace.invocation_page
    following, preceding = page.offset + page.limit, max(0, page.offset - page.limit)
    return {
        "offset": page.offset,
        "limit": page.limit,
        "total": page.total,
        "next": links.page(following) if following < page.total else None,
        "previous": links.page(preceding) if page.offset > 0 else None,
    }


def _conversation(trace: Trace) -> dict[str, Any] | None:
    """The session is one turn of a conversation (its SDK's session id): every turn, feedback on each."""
    head = trace.head
    if not head.turns:
        return None
    return {
        "conversationId": head.conversation_id,
        "turns": [
            {
                "sessionId": turn["session_id"],
                "createdAt": _datetime(turn["created_at"]),
                "status": turn["status"],
                "query": turn["query"],
                "feedback": turn["feedback"] or None,
                "current": turn["pk"] == head.session_pk,
            }
            for turn in head.turns
        ],
    }


def _views(trace: Trace, evaluation: SelfEvaluation, layers: dict[str, Any]) -> dict[str, Any]:
    session = trace.session
    # The views say what SelfEval concluded: a legacy layer (the agent's own JSON) shows in the
    # structured layers, marked, and in no view.
    rule, verifier, aiops = (
        layers[key] if evaluation.produced(name) is not None else None
        for key, name in (
            ("ruleEvaluation", Layer.RULE),
            ("verifierEvaluation", Layer.VERIFIER),
            ("aiopsRuleEvaluation", Layer.AIOPS),
        )
    )
    created, finished = session["created_at"], session["finished_at"]
    duration = int((finished - created).total_seconds() * 1000) if finished else None
    claim_verdicts: dict[str, int] = {}
    for check in (verifier or {}).get("claimChecks", []):
        claim_verdicts[check["verdict"]] = claim_verdicts.get(check["verdict"], 0) + 1
    return {
        "execution": {
            "status": session["status"],
            "mode": session["mode"],
            "createdAt": _datetime(created),
            "finishedAt": _datetime(finished),
            "durationMs": duration,
            "stepCount": len(trace.steps),
            "invocationCount": trace.invocation_page.total,
            "failedInvocationCount": trace.invocation_page.failed,
            "evaluationState": session["evaluation_state"],
        },
        "evidence": {
            "rule": {
                "evidenceScore": (rule or {}).get("evidenceScore", session["evidence_score"]),
                "appliedRules": [f.get("rule") for f in (rule or {}).get("factors", []) if isinstance(f, dict)],
            },
            "verifier": {
                "verdict": (verifier or {}).get("verdict") or session["verifier_verdict"] or None,
                "groundednessScore": (verifier or {}).get("groundednessScore", session["groundedness_score"]),
                "claimVerdicts": claim_verdicts,
                "failureAttribution": session["failure_attribution"] or None,
            },
            "aiops": {
                "verdict": (aiops or {}).get("verdict") or session["aiops_verdict"] or None,
                "failedChecks": [c["check"] for c in (aiops or {}).get("checks", []) if not c["passed"]],
            },
        },
        "user": {
            "feedback": session["feedback"] or None,
            "feedbackHistory": [
                {
                    "value": event["value"],
                    "comment": event["comment"],
                    "reviewer": event["reviewer"],
                    "client": event["client"],
                    "endUserId": event["end_user_id"],
                    "user": event["user__username"],
                    "createdAt": _datetime(event["created_at"]),
                }
                for event in trace.feedback_history
            ],
            "case": _case(trace.case),
            "badCase": _bad_case(trace.bad_case),
        },
    }


def _case(case: Row | None) -> dict[str, Any] | None:
    if case is None:
        return None
    return {
        "caseId": str(case["pk"]),
        "status": case["status"],
        "sourceType": case["source_type"],
        "faultCategory": case["fault_category"],
        "title": case["title"],
        "errorCode": case["error_code"],
        "service": case["service"],
        "reviewedAt": _datetime(case["reviewed_at"]),
        "createdAt": _datetime(case["created_at"]),
    }


def _bad_case(bad_case: Row | None) -> dict[str, Any] | None:
    if bad_case is None:
        return None
    return {
        "id": bad_case["id"],
        "status": bad_case["status"],
        "source": bad_case["source"],
        "category": bad_case["category"] or None,
        "assignee": bad_case["assignee__username"],
        "verifierVerdict": bad_case["verifier_verdict"] or None,
        "feedbackCount": bad_case["feedback_count"],
        "createdAt": _datetime(bad_case["created_at"]),
        "closedAt": _datetime(bad_case["closed_at"]),
    }


def _structured_layers(evaluation: SelfEvaluation, claim_checks: list[Row]) -> dict[str, Any]:
    """The three layers in camelCase; a missing or unreadable layer is null."""
    rule, aiops = evaluation.rule, evaluation.aiops
    return {
        "ruleEvaluation": {
            "evidenceScore": rule.evidence_score,
            "source": rule.source,
            "factors": layer_json(rule.factors),
        }
        if rule
        else None,
        "verifierEvaluation": _verifier(evaluation.verifier or VerifierEvaluation(), claim_checks)
        if evaluation.verifier or claim_checks
        else None,
        "aiopsRuleEvaluation": {"verdict": aiops.verdict, "checks": layer_json(aiops.checks)} if aiops else None,
        "invalidLayers": [{"layer": layer.name, "error": layer.error} for layer in evaluation.invalid],
        "raw": evaluation.container,
    }


def _verifier(layer: VerifierEvaluation, rows: list[Row]) -> dict[str, Any]:
    gatekeeper = layer.gatekeeper_result
    if rows:
        claim_checks = [
            {
                "claimId": row["claim_id"],
                "text": row["text"],
                "critical": row["critical"],
                "verdict": row["verdict"],
                "judge": row["judge"],
                "rationale": row["rationale"],
                "rationaleCode": row["rationale_code"],
                "rationaleParams": row["rationale_params"],
                "pSupported": row["p_supported"],
                "pContradicted": row["p_contradicted"],
                "band": row["band"] or None,
                "decidedBy": row["decided_by"] or None,
                "reasons": layer_json(entries_read(row["reasons"], JudgeReason) or []),
                "service": row["service"],
                "facts": layer_json(entries_read(row["facts"], FactCheck) or []),
                "bindings": layer_json(entries_read(row["bindings"], GatekeeperBinding) or []),
            }
            for row in rows
        ]
    else:
        bindings = gatekeeper.bindings if gatekeeper else []
        claim_checks = [
            {
                "claimId": check.claim_id,
                "text": check.text,
                "critical": check.critical,
                "verdict": check.verdict,
                "judge": check.judge,
                "rationale": check.rationale,
                "rationaleCode": check.rationale_code,
                "rationaleParams": check.rationale_params,
                "pSupported": check.p_supported,
                "pContradicted": check.p_contradicted,
                "band": check.band,
                "decidedBy": check.decided_by,
                "reasons": layer_json(check.reasons),
                "service": "",
                "facts": layer_json([f for f in layer.facts_checked if f.claim_id == check.claim_id]),
                "bindings": layer_json([b for b in bindings if b.claim_id == check.claim_id]),
            }
            for check in layer.claim_checks
        ]
    return {
        "source": layer.source or None,
        "verdict": layer.verdict,
        "groundednessScore": layer.groundedness_score,
        "criticalFactCount": layer.critical_fact_count,
        "round": layer.round,
        "rationale": layer.rationale,
        "rationaleCode": layer.rationale_code,
        "rationaleParams": layer.rationale_params,
        "traceabilityVersion": layer.traceability_version,
        "claimChecks": claim_checks,
        "factsChecked": layer_json(layer.facts_checked),
        "gatekeeperBindings": layer_json(gatekeeper.bindings)
        if gatekeeper
        else [binding for check in claim_checks for binding in check["bindings"]],
        "gatekeeperSummary": layer_json(gatekeeper.summary) if gatekeeper else {},
        "executorOutputParseStatus": layer_json(layer.executor_output_parse_status or {}),
        "executorStructuredOutput": layer.executor_structured_output,
        "composerOutput": layer_json(layer.composer_output or {}),
        "toolTraceSummary": layer_json(layer.tool_trace_summary),
    }
