"""Extraction of case fields from answers, in Chinese and English."""

import pytest

from cases.services.extraction import (
    RootCauseAndSolution,
    case_fields_extract,
    error_code,
    fault_category,
    root_cause_and_solution,
    service,
)
from tests.cases.realistic_answers import ANSWERS


@pytest.mark.parametrize(
    ("query", "answer", "expected"),
    [
        ("订单服务 5xx 突增", "order-service 的数据库连接池耗尽，导致 5xx 突增。", "DATABASE"),
        ("pods restart", "The pod was OOMKilled: a memory leak in the heap.", "MEMORY"),
        ("支付服务超时", "调用风控接口超时，响应慢。", "TIMEOUT"),
        ("why is the node slow", "CPU usage at 100%, load average 40 because of a busy loop.", "CPU"),
        ("写日志失败", "磁盘空间不足，文件系统已满。", "DISK"),
        ("网关报错", "网络丢包严重，连接被拒绝。", "NETWORK"),
        ("登录失败", "配置错误：环境变量 DB_HOST 指向了测试库以外的参数。", "CONFIG"),
        ("errors after release", "The new release was deployed at 10:00; roll back the deployment.", "DEPLOYMENT"),
        ("调用失败", "上游第三方依赖不可用。", "DEPENDENCY"),
        ("403 on upload", "Access denied: the service account lacks permission on the bucket.", "PERMISSION"),
        ("hello", "Everything looks fine.", "GENERAL"),
    ],
)
def test_fault_category_taxonomy(query, answer, expected):
    assert fault_category(query=query, answer=answer) == expected


def test_root_cause_section_outweighs_the_rest():
    answer = "## 根因\n数据库死锁\n## 现象\n请求超时，延迟升高，响应慢"

    assert (
        fault_category(query="", answer=answer, root_cause=root_cause_and_solution(answer=answer).root_cause)
        == "DATABASE"
    )


def test_chinese_keywords_match_whole_words_only():
    # "内存" inside no compound, but "存储" (storage) is a DISK word; no MEMORY vote from "存".
    assert fault_category(query="", answer="对象存储写入失败") == "DISK"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("ORA-00600 internal error", "ORA-00600"),
        ("connect ECONNREFUSED 10.0.0.1:5432", "ECONNREFUSED"),
        ("pod OOMKilled twice", "OOMKilled"),
        ("java.net.SocketTimeoutException: Read timed out", "java.net.SocketTimeoutException"),
        ("upstream returned HTTP 503", "HTTP 503"),
        # One normal form for HTTP statuses, however the answer spells them: "HTTP <status>".
        ("接口返回 502", "HTTP 502"),
        ("返回 HTTP 503", "HTTP 503"),
        ("状态码: 502", "HTTP 502"),
        ("gateway answered HTTP/1.1 504 Gateway Timeout", "HTTP 504"),
        ("the HTTP-503 page", "HTTP 503"),
        ("订单服务 5xx 突增", "HTTP 5xx"),
        # Labelled codes, MySQL numbers and symbolic names.
        ("错误码 1040", "1040"),
        ("错误码：ER_CON_COUNT_ERROR", "ER_CON_COUNT_ERROR"),
        ("error code: ERR_CONN_POOL", "ERR_CONN_POOL"),
        ("**Error code**: `OOMKilled (exit code 137)`  **Service**: inventory-service", "OOMKilled (exit code 137)"),
        (
            "**错误码**：`lookup auth-db.internal: no such host`  **服务**：user-service",
            "lookup auth-db.internal: no such host",
        ),
        ("MySQL error 1040: Too many connections", "MySQL 1040"),
        ("数据库返回MySQL 1040", "MySQL 1040"),
        ("MYSQL-1040", "MySQL 1040"),
        ("ER_CON_COUNT_ERROR from the primary", "ER_CON_COUNT_ERROR"),
        ("search failed with ERR_SEARCH_TIMEOUT", "ERR_SEARCH_TIMEOUT"),
        # The forms tools print, without an "error code" label.
        ("ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction", "MySQL 1205"),
        ("`nslookup auth-db.internal` 返回 NXDOMAIN", "NXDOMAIN"),
        ("Firefox reports SSL_ERROR_EXPIRED_CERT on the portal", "SSL_ERROR_EXPIRED_CERT"),
        # Neither a code nor a label followed by one.
        ("the error code is unknown", ""),
        ("知识库中未检索到该错误码的历史工单", ""),
        ("nothing here", ""),
    ],
)
def test_error_code(text, code):
    assert error_code(text=text) == code


def test_a_labelled_code_wins_over_codes_mentioned_in_passing():
    answer = "## Root cause\nThe pool is exhausted, causing HTTP 503.\n\n**Error code**: `HikariPool-1 - Connection is not available`"

    assert (
        case_fields_extract(query="5xx 突增", answer=answer).error_code == "HikariPool-1 - Connection is not available"
    )


def test_service_prefers_the_alert_then_service_like_names():
    assert service(alert_service="order-service", text="payment-gateway is slow") == "order-service"
    assert service(text="an out-of-memory in cart-service, cart-service restarted") == "cart-service"
    assert service(text="read-only file system on a well-known host") == ""
    assert service(text="see inventory-sync and the payment-api") == "payment-api"


def test_markdown_sections_english():
    answer = "Summary line\n\n## Root cause\nPool exhausted.\nSecond line.\n\n## Fix\n- raise pool\n- add alert\n"

    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(
        root_cause="Pool exhausted.\nSecond line.",
        solution="- raise pool\n- add alert",
    )


def test_markdown_sections_chinese_headings():
    answer = "### 1. 根因分析\n连接池耗尽\n### 2. 解决方案\n扩容连接池"

    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(
        root_cause="连接池耗尽", solution="扩容连接池"
    )


def test_label_lines_chinese():
    answer = "**原因**：缓存击穿导致数据库压力过大\n**处理建议**：\n1. 加互斥锁\n2. 预热缓存\n**影响**：下单失败"

    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(
        root_cause="缓存击穿导致数据库压力过大",
        solution="1. 加互斥锁\n2. 预热缓存",
    )


def test_field_lines_after_a_section_are_not_part_of_it():
    answer = (
        "## Root cause\nPool exhausted.\n\n## Fix\n1. raise the pool\n2. fix slow queries\n\n"
        "**Error code**: `HikariPool-1 - Connection is not available`  **Service**: order-service\n**Alert**: HighErrorRate"
    )

    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(
        root_cause="Pool exhausted.",
        solution="1. raise the pool\n2. fix slow queries",
    )


def test_bold_lines_act_as_section_headings():
    answer = (
        "**根因分析**\ninventory-service 因内存超限被 OOMKilled。\n\n**修复方案**\n1. 分页同步\n2. 提高 memory limit\n\n"
        "**错误码**：`OOMKilled (exit code 137)`  **服务**：inventory-service\n**告警**：PodCrashLooping"
    )

    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(
        root_cause="inventory-service 因内存超限被 OOMKilled。",
        solution="1. 分页同步\n2. 提高 memory limit",
    )


def test_hash_signs_in_text_are_not_headings():
    answer = "Issue #42: C# client retries; see ticket #7"

    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(root_cause="", solution="")


@pytest.mark.parametrize("expected", ANSWERS, ids=[answer.query for answer in ANSWERS])
def test_realistic_answers_give_the_fields_a_reviewer_would_file(expected):
    extracted = case_fields_extract(query=expected.query, answer=expected.answer)

    assert (extracted.root_cause, extracted.solution) == (expected.root_cause, expected.solution)
    assert (extracted.fault_category, extracted.error_code) == (expected.category, expected.error_code)


@pytest.mark.parametrize(
    ("answer", "root_cause", "solution"),
    [
        ("**结论**：连接池耗尽\n**解决**：扩容", "连接池耗尽", "扩容"),
        ("**根因**：连接池耗尽\n**处理**：扩容", "连接池耗尽", "扩容"),
        ("Summary: the pool is exhausted\nActions: raise it", "the pool is exhausted", "raise it"),
        ("## Summary\nthe pool is exhausted\n## Actions\n- raise it", "the pool is exhausted", "- raise it"),
    ],
)
def test_conclusion_and_action_labels_are_sections(answer, root_cause, solution):
    assert root_cause_and_solution(answer=answer) == RootCauseAndSolution(root_cause=root_cause, solution=solution)


def test_a_hikaricp_pool_sizing_answer_is_a_database_case():
    hikari = next(answer for answer in ANSWERS if "HikariCP" in answer.answer)

    assert case_fields_extract(query=hikari.query, answer=hikari.answer).fault_category == "DATABASE"


def test_root_cause_and_solution_fall_back_to_the_answer():
    extracted = case_fields_extract(query="q", answer="just an answer")

    assert (extracted.root_cause, extracted.solution) == ("just an answer", "just an answer")


@pytest.mark.django_db
def test_demo_cases_carry_the_code_their_answer_names_and_no_field_trailer():
    # Issue 9, 3.7: the demo's answers end with "**Error code**: `...`  **Service**: ..." lines.
    from django.core.management import call_command

    from cases.models import Case
    from demo.catalogue import TOPICS

    call_command("seed_demo", sessions=120, seed=1)

    cases = list(Case.objects.select_related("session"))
    assert {case.status for case in cases} >= {"pending", "approved"}
    for case in cases:
        topic = next(t for t in TOPICS if f"`{t.error_code}`" in case.session.answer)
        assert case.error_code == topic.error_code, case.diagnosis_id
        for label in ("**Error code**", "**错误码**", "**Service**", "**服务**", "**Alert**", "**告警**"):
            assert label not in case.solution, (case.diagnosis_id, case.solution)
            assert label not in case.root_cause, (case.diagnosis_id, case.root_cause)
