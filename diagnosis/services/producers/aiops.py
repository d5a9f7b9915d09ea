"""AIOps rule evaluation (`aiops_rule_evaluation`): light rule checks of an alert diagnosis.

Checks (each entry: check, passed, reason, severity, applicable, plus details):
- final_report_present (critical): the answer is not empty;
- focuses_on_input_alert (critical, payload mode = an input alert exists): the report names the
  alert's service or the alert name (compared without case, spaces, hyphens, underscores);
- evidence_tools_succeeded (critical): at least one evidence tool call succeeded;
- evidence_<category> (warning), one per category of the tool map: a call of that category
  succeeded. The map is `EvaluationConfig.tool_categories` (`SELFEVAL_AIOPS_TOOL_CATEGORIES`);
- unrelated_alerts_not_main_object (critical, payload mode with other active alerts; seed document
  000, section 6: 是否把无关活跃告警扩展成主诊断对象): the lead of the report
  (`core.markdown.answer_lead`: its root-cause section, else its conclusion, under a heading or a
  label line, never code; else its first paragraph) names no other active alert (its service,
  when that is not the input alert's, or its name) as what it diagnoses. Naming the input service
  as well does not help: "log-agent DiskFull 导致 order-service 写日志失败" makes DiskFull the main
  object. A sentence that names the other alert only to set it aside ("与本次故障无关",
  "unrelated", "not the root cause") is fine.

Verdict: FAIL when an applicable critical check fails, WARN when only warning checks fail, PASS
otherwise. Checks that do not apply pass with `applicable: false` and never change the verdict.
"""

import re
from collections.abc import Mapping
from typing import Any

from core.markdown import answer_lead
from core.text import compact
from diagnosis.constants import AiOpsCheckSeverity, AiOpsVerdict
from diagnosis.evaluation_layers import AiOpsCheckEntry, AiOpsRuleEvaluation
from diagnosis.messages import Message, message

from .types import SessionData

ToolCategories = Mapping[str, tuple[str, ...]]  # category -> lowercased tool names
_SENTENCE_END = re.compile(r"[。！？；;!?\n]|\.(?=\s|$)")
# A sentence that names an alert only to set it aside.
_SET_ASIDE = re.compile(
    r"无关|不相关|没有关系|并非|排除|不是(?:本次|这次)?(?:故障|问题|告警)?的?(?:根因|原因|主因|根本原因)|不是导致"
    r"|unrelated|not related|irrelevant|ruled out|not (?:the )?(?:root )?cause|independent of|a side effect",
    re.IGNORECASE,
)


def tool_category(tool_name: str, categories: ToolCategories) -> str:
    for category, tools in categories.items():
        if tool_name.lower() in tools:
            return category
    return ""


def _mentions(text_compact: str, *names: str) -> list[str]:
    return [name for name in names if name and len(compact(name)) >= 3 and compact(name) in text_compact]


def aiops_rule_evaluation(*, session: SessionData, tool_categories: ToolCategories) -> AiOpsRuleEvaluation:
    categories = tool_categories
    alert = session.alert or {}
    alert_name, alert_service = str(alert.get("name") or ""), str(alert.get("service") or "")
    payload_mode = bool(alert_name or alert_service)
    answer = session.answer or ""
    answer_compact = compact(answer)
    checks: list[AiOpsCheckEntry] = []

    def add(
        check: str, passed: bool, reason: Message, severity=AiOpsCheckSeverity.CRITICAL, applicable=True, **extra: Any
    ):
        checks.append(
            AiOpsCheckEntry(
                check=check,
                passed=passed,
                **reason.fields("reason"),
                severity=severity,
                applicable=applicable,
                **extra,
            )
        )

    add(
        "final_report_present",
        bool(answer.strip()),
        message("aiops.report_present" if answer.strip() else "aiops.no_report"),
    )

    if payload_mode:
        named = _mentions(answer_compact, alert_service, alert_name)
        add(
            "focuses_on_input_alert",
            bool(named),
            message("aiops.names_alert", named=named) if named else
            message("aiops.names_neither", service=alert_service, alert=alert_name),
        )  # fmt: skip
    else:
        add("focuses_on_input_alert", True, message("aiops.not_payload_mode"), applicable=False)

    per_category: dict[str, dict[str, Any]] = {}
    for category in categories:
        per_category[category] = {"called": 0, "succeeded": 0, "tools": []}
    for inv in session.invocations:
        category = tool_category(inv.tool_name, categories)
        if category:
            entry = per_category[category]
            entry["called"] += 1
            entry["succeeded"] += inv.status == "SUCCESS"
            if inv.tool_name not in entry["tools"]:
                entry["tools"].append(inv.tool_name)
    any_success = any(entry["succeeded"] for entry in per_category.values())
    add(
        "evidence_tools_succeeded",
        any_success,
        message("aiops.evidence_succeeded" if any_success else "aiops.no_evidence_succeeded"),
        categories={c: e["succeeded"] > 0 for c, e in per_category.items()},
    )
    for category, entry in per_category.items():
        counts = {"category": category, "called": entry["called"]}
        if entry["succeeded"]:
            reason = message("aiops.category_succeeded", **counts, succeeded=entry["succeeded"])
        elif entry["called"]:
            reason = message("aiops.category_all_failed", **counts)
        else:
            reason = message("aiops.category_not_called", category=category, tools=list(categories[category]))
        add(f"evidence_{category}", entry["succeeded"] > 0, reason, AiOpsCheckSeverity.WARNING, tools=entry["tools"])

    add_unrelated = _unrelated_alerts_check(session, alert_name, alert_service, answer)
    add(**add_unrelated)

    failed = [c for c in checks if c.applicable and not c.passed]
    critical_failed = [c.check for c in failed if c.severity == AiOpsCheckSeverity.CRITICAL]
    warnings = [c.check for c in failed if c.severity == AiOpsCheckSeverity.WARNING]
    verdict = AiOpsVerdict.FAIL if critical_failed else AiOpsVerdict.WARN if warnings else AiOpsVerdict.PASS
    return AiOpsRuleEvaluation(verdict=verdict, checks=checks, failed_checks=critical_failed + warnings)


def _unrelated_alerts_check(session: SessionData, alert_name: str, alert_service: str, answer: str) -> dict[str, Any]:
    others = [
        a
        for a in session.active_alerts
        if isinstance(a, dict)
        and not (str(a.get("name") or "") == alert_name and str(a.get("service") or "") == alert_service)
    ]
    base = {"check": "unrelated_alerts_not_main_object"}
    if not (alert_name or alert_service) or not others:
        reason = message("aiops.no_input_alert" if others else "aiops.no_other_alert")
        return {**base, "passed": True, "reason": reason, "applicable": False}
    lead = answer_lead(answer)
    # Only the sentences that do not set an alert aside can make it the main object.
    asserted = compact(" | ".join(part for part in _SENTENCE_END.split(lead) if not _SET_ASIDE.search(part)))
    for other in others:
        other_service, other_name = str(other.get("service") or ""), str(other.get("name") or "")
        if compact(other_service) == compact(alert_service):
            continue  # another alert of the input's own service is no unrelated alert
        named = _mentions(asserted, other_service, other_name)
        if named:
            return {
                **base,
                "passed": False,
                "reason": message("aiops.main_is_other", named=named),
                "alert": {"name": other.get("name"), "service": other.get("service")},
            }
    if _mentions(compact(lead), alert_service, alert_name):
        return {**base, "passed": True, "reason": message("aiops.main_is_input")}
    return {**base, "passed": True, "reason": message("aiops.no_other_is_main")}
