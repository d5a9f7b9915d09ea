"""Composer (`composer_output`): the user-facing answer, built only from what the verifier allows.

- PASS: the supported claims.
- LOW_CONFID: the supported claims, a low-confidence notice and `retry_context`: the claims that
  need evidence (with why) and the tools likely to supply it (the tool map's tools of the
  category the claim's wording and facts point to; a tool whose call failed is named first).
- REJECT: only the supported (confirmed) claims and a degraded notice.
- No judged claims (executor output missing or invalid): a notice that the answer could not be
  checked; `finalAnswer` is never copied into the answer.
The text is in the session's language (zh / en).
"""

import re

from diagnosis.constants import ClaimVerdict, VerifierVerdict
from diagnosis.evaluation_layers import (
    ComposerOutput,
    ComposerSummary,
    ParseStatus,
    RetryClaim,
    RetryContext,
    SuggestedTool,
)
from diagnosis.messages import Message, message

from .aiops import ToolCategories, tool_category
from .executor_output import VALID
from .gatekeeper import REF_FROM_FAILED_CALL
from .verifier import ClaimOutcome

_NOTICES = {
    "zh": {
        VerifierVerdict.LOW_CONFID: "提示：以下结论证据不足，置信度较低，仅供参考；部分结论需要补充证据后再确认。",
        VerifierVerdict.REJECT: "提示：回答未通过证据校验，已降级，仅保留已被证据确认的信息。",
        "unverified": "提示：执行器未给出有效的结构化证据输出，无法校验该回答，请补充证据后重试。",
        "empty": "暂无可由证据确认的结论。",
    },
    "en": {
        VerifierVerdict.LOW_CONFID: "Note: the evidence for this answer is incomplete (low confidence); some conclusions still need evidence.",
        VerifierVerdict.REJECT: "Note: this answer failed evidence verification and was degraded to the confirmed facts only.",
        "unverified": "Note: the executor gave no valid structured evidence output, so this answer could not be verified.",
        "empty": "No conclusion could be confirmed by the evidence.",
    },
}
_CATEGORY_HINTS = {
    "logs": re.compile(
        r"log|error|exception|stack|trace|timeout|timed out|日志|报错|异常|错误|超时|堆栈", re.IGNORECASE
    ),
    "metrics": re.compile(
        r"cpu|memory|latency|qps|rps|rate|usage|throughput|%|指标|内存|延迟|率|连接数|吞吐|负载",
        re.IGNORECASE,
    ),
}
_FACT_CATEGORIES = {"percent": "metrics", "duration": "metrics", "size": "metrics"}


def _sentence(text: str, language: str) -> str:
    text = text.strip()
    if language == "zh":
        return text if text[-1:] in "。！？.!?" else f"{text}。"
    return text if text[-1:] in ".!?。" else f"{text}."


def _join(texts: list[str], language: str) -> str:
    sentences = [_sentence(t, language) for t in texts if t.strip()]
    return ("" if language == "zh" else " ").join(sentences)


def _claim_categories(outcome: ClaimOutcome) -> list[str]:
    found = [category for category, pattern in _CATEGORY_HINTS.items() if pattern.search(outcome.claim.text)]
    for fact in outcome.facts:
        if fact["kind"] == "error_code" and "logs" not in found:
            found.append("logs")
        category = _FACT_CATEGORIES.get(fact["family"])
        if category and category not in found:
            found.append(category)
    return found or ["knowledge"]


def _suggested_tools(
    outcomes: list[ClaimOutcome], used_tools: list[str], categories: ToolCategories
) -> list[SuggestedTool]:
    suggestions: dict[str, SuggestedTool] = {}

    def suggest(tool: str, category: str, claim_id: str, why: Message) -> None:
        entry = suggestions.setdefault(tool, SuggestedTool(tool=tool, category=category, **why.fields("why")))
        if claim_id not in entry.claims:
            entry.claims.append(claim_id)

    for outcome in outcomes:
        for binding in outcome.bindings:
            if binding.status == REF_FROM_FAILED_CALL and binding.tool:
                suggest(
                    binding.tool,
                    tool_category(binding.tool, categories),
                    outcome.claim.claim_id,
                    message("composer.cited_call_failed"),
                )
        for category in _claim_categories(outcome):
            tools = categories.get(category, ())
            # Prefer a tool of that category the agent already uses.
            tool = next((t for t in used_tools if t.lower() in tools), tools[0] if tools else "")
            if tool:
                suggest(
                    tool, category, outcome.claim.claim_id, message("composer.category_evidence", category=category)
                )
    return list(suggestions.values())


def composer_output(
    *,
    verdict: VerifierVerdict,
    outcomes: list[ClaimOutcome],
    language: str,
    parse_status: ParseStatus,
    used_tools: list[str],
    tool_categories: ToolCategories,
) -> ComposerOutput:
    language = language if language in _NOTICES else "en"
    notices = _NOTICES[language]
    supported = [o for o in outcomes if o.verdict == ClaimVerdict.SUPPORTED]
    withheld = [o for o in outcomes if o.verdict != ClaimVerdict.SUPPORTED]
    body = _join([o.claim.text for o in supported], language)
    unverified = parse_status.status != VALID or not outcomes
    retry_context = None
    notice: str | None = None
    if verdict == VerifierVerdict.PASS:
        mode = "full"
    elif unverified:
        mode, notice = "unverified", notices["unverified"]
        retry_context = RetryContext(
            **message(f"composer.executor_output_{parse_status.status.lower()}").fields("reason"),
            **message("composer.rerun_executor").fields("instruction"),
        )
    elif verdict == VerifierVerdict.LOW_CONFID:
        mode, notice = "low_confidence", notices[VerifierVerdict.LOW_CONFID]
        retry_context = RetryContext(
            **message("composer.claims_need_evidence").fields("reason"),
            claims=[
                RetryClaim(
                    claim_id=o.claim.claim_id,
                    text=o.claim.text,
                    verdict=ClaimVerdict(o.verdict),
                    critical=o.claim.critical,
                    **o.message.fields("reason"),
                )
                for o in withheld
            ],
            suggested_tools=_suggested_tools(withheld, used_tools, tool_categories),
        )
    else:
        mode, notice = "degraded", notices[VerifierVerdict.REJECT]
    answer_parts = [
        p for p in (notice, body or (notices["empty"] if verdict != VerifierVerdict.PASS or not outcomes else "")) if p
    ]
    return ComposerOutput(
        language=language,
        verdict=verdict,
        mode=mode,
        answer="\n\n".join(answer_parts),
        notice=notice,
        claims_used=[o.claim.claim_id for o in supported],
        claims_withheld=[o.claim.claim_id for o in withheld],
        retry_context=retry_context,
        parse_status=parse_status.status,
        summary=ComposerSummary(claims=len(outcomes), supported=len(supported), withheld=len(withheld)),
    )
