"""Critical facts: extraction in Chinese and English, and checking them against evidence."""

import pytest

from core.text import negated_terms, tokens
from judge.facts import evidence_text, extract_facts, fact_check


def facts_of(text: str) -> set[tuple[str, object]]:
    return {(f.kind, f.value) for f in extract_facts(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("错误率上升到 35%，超时 30 秒", {("quantity", 35.0), ("quantity", 30000.0)}),
        ("request timed out after 30000ms", {("quantity", 30000.0)}),
        ("百分之12 的请求失败, 1,200 requests", {("quantity", 12.0), ("quantity", 1200.0)}),
        ("limit 512Mi", {("quantity", 512 * 1024.0**2)}),
        ("故障从 8点30分 开始，08:45:10 恢复", {("time", "08:30"), ("time", "08:45:10")}),
        ("started 2026-11-29T08:00:00Z", {("time", "2026-11-29t08:00:00z")}),
        ("HTTP 503 and 5xx", {("error_code", "503"), ("error_code", "5xx")}),
        ("ORA-00060 deadlock, E1234", {("error_code", "ora-00060"), ("error_code", "e1234")}),
        ("exit code 137, OOMKilled", {("error_code", "137"), ("error_code", "oomkilled")}),
        ("java.lang.OutOfMemoryError", {("error_code", "outofmemoryerror")}),
        (
            "order-service 调用 payment-gateway 超时",
            {("identifier", "order-service"), ("identifier", "payment-gateway")},
        ),
        ("pod order-service-7d9f8b6c4-x2x9z restarted", {("identifier", "order-service-7d9f8b6c4-x2x9z")}),
        ("db01.prod.local at 10.0.3.7:8080", {("identifier", "db01.prod.local"), ("ip", "10.0.3.7:8080")}),
        ('the log says "connection reset"', {("quoted", "connection reset")}),
        ("报错信息为「连接被拒绝」", {("quoted", "连接被拒绝")}),
    ],
)
def test_extracts_critical_facts(text, expected):
    assert expected <= facts_of(text)


def test_ordinary_hyphenated_words_and_pod_digits_are_not_facts():
    found = facts_of("a read-only, well-known pod order-service-7d9f8b6c4-x2x9z")

    assert ("identifier", "read-only") not in found
    assert not any(kind == "number" for kind, _ in found)


@pytest.mark.parametrize(
    ("text", "negated"),
    [
        ("数据库连接池没有耗尽", {"耗尽"}),
        ("未发现异常日志", {"发现", "异常"}),
        ("不存在内存泄漏", {"存在", "内存"}),
        ("Connection is not available, request timed out", {"available"}),
        ("the pool isn't exhausted", {"exhausted"}),
        ("we never saw errors", {"saw", "errors"}),
    ],
)
def test_negations_govern_the_following_words_in_the_same_clause(text, negated):
    assert negated_terms(text) == negated


def test_chinese_is_segmented_into_words_not_characters():
    assert tokens("数据库连接池耗尽") == ["数据库", "连接池", "耗尽"]


def check(claim: str, evidence: str) -> list[tuple[str, str]]:
    prepared = evidence_text(evidence)
    return [(f.text, fact_check(f, prepared)[0]) for f in extract_facts(claim)]


@pytest.mark.parametrize(
    ("claim", "evidence", "statuses"),
    [
        ("超时 30 秒", "request timed out after 30000ms", [("30秒", "STATED")]),
        ("timed out after 20s", "request timed out after 30000ms", [("20s", "MISMATCH")]),
        ("错误率 35%", "错误率升至 35.0%", [("35%", "STATED")]),
        ("错误率 45%", "错误率升至 35%", [("45%", "MISMATCH")]),
        ("内存 2GB", "错误率升至 35%", [("2gb", "ABSENT")]),
        ("返回 503", "nginx: HTTP 502 bad gateway", [("返回503", "MISMATCH")]),
        ("5xx 突增", "HTTP 503 rising", [("5xx", "STATED")]),
        ("ORA-00060", "ORA-01555 snapshot too old", [("ora-00060", "MISMATCH")]),
        ("payment-service 超时", "order-service 超时", [("payment-service", "MISMATCH")]),
        ("Order Service 超时", "order-service 超时", []),
        ("order-service 超时", "Order_Service 超时", [("order-service", "STATED")]),
        ("10.0.0.8 unreachable", "10.0.0.7 unreachable", [("10.0.0.8", "MISMATCH")]),
        ("连接池最大连接数为 100", "连接池最大连接数为 50", [("100", "MISMATCH")]),
        ("pool size 100", "release 50 shipped", [("100", "ABSENT")]),
        ("pool size 50", "max pool size: 50", [("50", "STATED")]),
        ("有 132 个请求在等待", "waiting=132", [("132个", "STATED")]),
        ('logged "connection refused"', 'logged "connection reset by peer"', [('"connection refused"', "MISMATCH")]),
        (
            "http_5xx_ratio reached 0.32",
            "http_5xx_ratio 0.23 at 09:01",
            [("http_5xx_ratio", "STATED"), ("0.32", "MISMATCH")],
        ),
        ("连接池没有耗尽", "连接池耗尽", [("not 耗尽", "MISMATCH")]),
        ("连接池没有耗尽", "连接池未耗尽", [("not 耗尽", "STATED")]),
    ],
)
def test_facts_are_checked_for_the_same_value(claim, evidence, statuses):
    assert check(claim, evidence) == statuses
