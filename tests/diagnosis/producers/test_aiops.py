"""AIOps rule evaluation: each check, the configurable tool map and the verdict."""

import pytest

from diagnosis.evaluation_layers import layer_json
from diagnosis.services.evaluation_config import evaluation_config
from diagnosis.services.producers.aiops import aiops_rule_evaluation

from .builders import inv, retrieval, session

ALERT = {"name": "HighErrorRate", "service": "order-service", "severity": "critical"}
OTHERS = [{"name": "DiskFull", "service": "log-agent"}, {"name": "HighErrorRate", "service": "order-service"}]
REPORT = "## Root cause\nThe order-service database connection pool is exhausted.\n## Fix\nRaise the pool size."
ALL_TOOLS = [
    retrieval("k", "runbook", tool="lookup_knowledge"),
    inv("l", tool="query_logs"),
    inv("m", tool="prometheus_query"),
]


def run(answer=REPORT, invocations=ALL_TOOLS, alert=ALERT, active_alerts=OTHERS) -> dict:
    """The AIOps layer as stored, with the configured tool map."""
    data = session(mode="aiops", answer=answer, invocations=invocations, alert=alert, active_alerts=active_alerts)
    return layer_json(aiops_rule_evaluation(session=data, tool_categories=evaluation_config().tool_categories))


def checks(layer: dict) -> dict[str, bool]:
    return {c["check"]: c["passed"] for c in layer["checks"]}


def test_a_focused_report_with_every_evidence_category_passes():
    layer = run()

    assert layer["verdict"] == "PASS"
    assert all(checks(layer).values())
    assert all(c["reason"] for c in layer["checks"])


def test_missing_report_fails():
    layer = run(answer="  ")

    assert layer["verdict"] == "FAIL"
    assert checks(layer)["final_report_present"] is False


def test_report_about_something_else_fails_the_focus_check():
    layer = run(answer="## Root cause\nThe payment gateway certificate expired.")

    assert checks(layer)["focuses_on_input_alert"] is False
    assert layer["verdict"] == "FAIL"


def test_focus_matches_names_loosely():
    assert checks(run(answer="Order Service: pool exhausted"))["focuses_on_input_alert"] is True
    assert checks(run(answer="告警 high_error_rate 的根因是连接池耗尽"))["focuses_on_input_alert"] is True


def test_without_an_input_alert_focus_and_unrelated_checks_do_not_apply():
    layer = run(alert=None)
    by_name = {c["check"]: c for c in layer["checks"]}

    assert by_name["focuses_on_input_alert"]["applicable"] is False
    assert by_name["unrelated_alerts_not_main_object"]["applicable"] is False
    assert layer["verdict"] == "PASS"


def test_a_missing_category_warns_and_a_failed_one_says_so():
    layer = run(invocations=[ALL_TOOLS[0], inv("l", tool="query_logs", status="FAILED")])
    by_name = {c["check"]: c for c in layer["checks"]}

    assert layer["verdict"] == "WARN"
    assert by_name["evidence_logs"]["reason"] == "all 1 logs calls failed"
    assert by_name["evidence_metrics"]["passed"] is False
    assert by_name["evidence_tools_succeeded"]["passed"] is True


def test_no_successful_evidence_tool_fails():
    layer = run(invocations=[inv("x", tool="send_email"), inv("l", tool="query_logs", status="FAILED")])

    assert checks(layer)["evidence_tools_succeeded"] is False
    assert layer["verdict"] == "FAIL"


def test_tool_map_is_configurable(settings):
    settings.SELFEVAL_AIOPS_TOOL_CATEGORIES = {"traces": ["jaeger_search"]}

    layer = run(invocations=[inv("t", tool="jaeger_search")])

    assert checks(layer)["evidence_traces"] is True
    assert "evidence_logs" not in checks(layer)
    assert layer["verdict"] == "PASS"


@pytest.mark.parametrize(
    "answer",
    [
        "## Root cause\nThe log-agent disk is full (DiskFull).\n## Also\norder-service errors follow.",
        "log-agent 磁盘已满是本次故障的主因。\n\norder-service 受到影响。",
        "# 根因\nDiskFull：log-agent 所在节点磁盘写满。",
    ],
)
def test_another_active_alert_as_the_main_object_fails(answer):
    layer = run(answer=answer)
    by_name = {c["check"]: c for c in layer["checks"]}

    assert by_name["unrelated_alerts_not_main_object"]["passed"] is False
    assert by_name["unrelated_alerts_not_main_object"]["alert"] == {"name": "DiskFull", "service": "log-agent"}
    assert layer["verdict"] == "FAIL"


def test_mentioning_another_alert_outside_the_lead_is_fine():
    answer = REPORT + "\n## Other alerts\nDiskFull on log-agent is unrelated."

    assert checks(run(answer=answer))["unrelated_alerts_not_main_object"] is True


# --- the lead is the report's real lead (seed document 000, section 6) ---------------------------


@pytest.mark.parametrize(
    "answer",
    [
        # A label line states the root cause; the intro names the input service.
        "本次告警涉及 order-service 的 5xx。\n\n**根因**：log-agent 所在节点 DiskFull，日志写入阻塞。\n**建议**：清理磁盘",
        "Alert on order-service investigated.\n\nRoot cause: DiskFull on log-agent filled the node.\n",
        # The lead names the input service too, but as the victim of the other alert.
        "## 根因\nlog-agent 的 DiskFull 导致 order-service 写日志阻塞，进而 5xx。",
        "## Root cause\nThe DiskFull alert on log-agent caused the order-service errors.",
    ],
)
def test_a_lead_that_makes_another_alert_the_root_cause_fails(answer):
    layer = run(answer=answer)
    check = next(c for c in layer["checks"] if c["check"] == "unrelated_alerts_not_main_object")

    assert check["passed"] is False
    assert check["alert"] == {"name": "DiskFull", "service": "log-agent"}
    assert layer["verdict"] == "FAIL"


@pytest.mark.parametrize(
    "answer",
    [
        # A heading inside a code block is code, not the lead.
        "```\n# Root cause check\ngrep DiskFull log-agent.log\n```\n\nThe order-service database pool is exhausted.",
        # The lead names the other alert only to set it aside.
        "## 根因\norder-service 数据库连接池耗尽。log-agent 的 DiskFull 与本次故障无关。",
        "## Root cause\nThe order-service pool is exhausted; the DiskFull alert on log-agent is unrelated.",
        "**根因**：order-service 连接池耗尽\n**其他告警**：log-agent DiskFull 不是根因",
    ],
)
def test_a_lead_about_the_input_alert_passes(answer):
    assert checks(run(answer=answer))["unrelated_alerts_not_main_object"] is True
