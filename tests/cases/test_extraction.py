"""Extraction of case fields from answers, in Chinese and English."""

import pytest

from cases.services.extraction import answer_sections, case_fields_extract, error_code, fault_category, service


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
        fault_category(query="", answer=answer, root_cause=answer_sections(answer=answer)["root_cause"]) == "DATABASE"
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
        ("接口返回 502", "502"),
        ("订单服务 5xx 突增", "5xx"),
        ("nothing here", ""),
    ],
)
def test_error_code(text, code):
    assert error_code(text=text) == code


def test_service_prefers_the_alert_then_service_like_names():
    assert service(alert_service="order-service", text="payment-gateway is slow") == "order-service"
    assert service(text="an out-of-memory in cart-service, cart-service restarted") == "cart-service"
    assert service(text="read-only file system on a well-known host") == ""
    assert service(text="see inventory-sync and the payment-api") == "payment-api"


def test_markdown_sections_english():
    answer = "Summary line\n\n## Root cause\nPool exhausted.\nSecond line.\n\n## Fix\n- raise pool\n- add alert\n"

    assert answer_sections(answer=answer) == {
        "root_cause": "Pool exhausted.\nSecond line.",
        "solution": "- raise pool\n- add alert",
    }


def test_markdown_sections_chinese_headings():
    answer = "### 1. 根因分析\n连接池耗尽\n### 2. 解决方案\n扩容连接池"

    assert answer_sections(answer=answer) == {"root_cause": "连接池耗尽", "solution": "扩容连接池"}


def test_label_lines_chinese():
    answer = "**原因**：缓存击穿导致数据库压力过大\n**处理建议**：\n1. 加互斥锁\n2. 预热缓存\n**影响**：下单失败"

    assert answer_sections(answer=answer) == {
        "root_cause": "缓存击穿导致数据库压力过大",
        "solution": "1. 加互斥锁\n2. 预热缓存",
    }


def test_hash_signs_in_text_are_not_headings():
    answer = "Issue #42: C# client retries; see ticket #7"

    assert answer_sections(answer=answer) == {}


def test_root_cause_and_solution_fall_back_to_the_answer():
    extracted = case_fields_extract(query="q", answer="just an answer")

    assert (extracted.root_cause, extracted.solution) == ("just an answer", "just an answer")
