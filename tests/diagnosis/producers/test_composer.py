"""Composer: the user-facing answer per verdict, in Chinese and English."""

import pytest

from .builders import ScriptedJudge, claim, evaluate, executor, inv, layer_of, retrieval, session

ZH_KB = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。错误率升至 35%。"
EN_KB = "When the order-service database connection pool is exhausted, requests queue and time out with 5xx."
INVOCATIONS = [
    retrieval("inv-1", ZH_KB),
    retrieval("inv-2", EN_KB),
    retrieval("inv-3", "JVM heap usage 97%", status="FAILED", tool="query_metrics"),
    inv("inv-4", tool="query_logs"),
]
ZH = {
    "ok": claim("c1", "order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽")),
    "weak": claim("c2", "缓存命中率下降", ("inv-1#1", "连接池耗尽"), critical=False),
    "wrong": claim("c3", "错误率升至 45%", ("inv-1#1", "错误率升至 35%")),
    "failed": claim("c4", "JVM 堆内存使用率 97%", ("inv-3#1", "JVM heap usage 97%")),
}
EN = {
    "ok": claim(
        "c1", "The order-service database connection pool is exhausted", ("inv-2#1", "connection pool is exhausted")
    ),
    "weak": claim("c2", "The cache hit rate dropped", ("inv-2#1", "connection pool is exhausted"), critical=False),
    "wrong": claim("c3", "Requests time out with 4xx", ("inv-2#1", "time out with 5xx")),
}


def compose(language: str, *keys: str, executor_output=None) -> dict:
    claims = ZH if language == "zh" else EN
    output = executor_output if executor_output is not None else executor(*(claims[k] for k in keys))
    query = "订单服务为什么报错？" if language == "zh" else "Why does the order service fail?"
    result = evaluate(session(invocations=INVOCATIONS, executor_output=output, query=query), judge=SCRIPT)
    return layer_of(result, "verifier_evaluation")["composer_output"]


# What the composer does with each verdict is under test, not the judge: the verdicts are given.
SCRIPT = ScriptedJudge(
    {ZH["ok"]["text"]: "SUPPORTED", EN["ok"]["text"]: "SUPPORTED", ZH["weak"]["text"]: "UNSUPPORTED",
     EN["weak"]["text"]: "UNSUPPORTED", ZH["wrong"]["text"]: "CONTRADICTED", EN["wrong"]["text"]: "CONTRADICTED"}
)  # fmt: skip


@pytest.mark.parametrize(
    ("language", "answer"),
    [
        ("zh", "order-service 的数据库连接池耗尽。"),
        ("en", "The order-service database connection pool is exhausted."),
    ],
)
def test_pass_answers_with_the_supported_claims_only(language, answer):
    out = compose(language, "ok")

    assert (out["verdict"], out["mode"], out["language"]) == ("PASS", "full", language)
    assert out["answer"] == answer
    assert out["notice"] is None and out["retry_context"] is None


@pytest.mark.parametrize(("language", "notice_word"), [("zh", "置信度较低"), ("en", "low confidence")])
def test_low_confidence_adds_a_notice_and_a_retry_context(language, notice_word):
    out = compose(language, "ok", "weak")

    assert out["verdict"] == "LOW_CONFID"
    assert notice_word in out["notice"]
    assert out["answer"].startswith(out["notice"])
    assert ZH["weak"]["text"] not in out["answer"] and EN["weak"]["text"] not in out["answer"]
    retry = out["retry_context"]
    assert [c["claimId"] for c in retry["claims"]] == ["c2"]
    assert retry["suggested_tools"][0]["claims"] == ["c2"]
    # "命中率" / "hit rate" point to metrics: the map's metrics tool is suggested.
    assert {s["category"] for s in retry["suggested_tools"]} == {"metrics"}


def test_retry_context_names_the_failed_call_first():
    claims = [ZH["ok"], {**ZH["ok"], "claimId": "c5"}, ZH["failed"]]
    out = compose("zh", executor_output=executor(*claims))

    assert out["verdict"] == "LOW_CONFID"
    first = out["retry_context"]["suggested_tools"][0]
    assert (first["tool"], first["why"], first["claims"]) == ("query_metrics", "the cited call failed", ["c4"])


@pytest.mark.parametrize(("language", "notice_word"), [("zh", "已降级"), ("en", "degraded")])
def test_reject_keeps_only_confirmed_facts(language, notice_word):
    out = compose(language, "ok", "wrong")

    assert (out["verdict"], out["mode"]) == ("REJECT", "degraded")
    assert notice_word in out["notice"]
    claims = ZH if language == "zh" else EN
    assert claims["ok"]["text"] in out["answer"]
    assert claims["wrong"]["text"] not in out["answer"]
    assert out["claims_used"] == ["c1"] and out["claims_withheld"] == ["c3"]
    assert out["retry_context"] is None


def test_reject_with_nothing_confirmed_says_so():
    out = compose("en", "wrong")

    assert out["verdict"] == "REJECT"
    assert "No conclusion could be confirmed" in out["answer"]


@pytest.mark.parametrize("raw", [{}, {"version": "executor_evidence_v2", "claims": "x", "finalAnswer": "秘密结论"}])
def test_unverifiable_output_never_echoes_the_final_answer(raw):
    out = compose("zh", executor_output=raw)

    assert out["mode"] == "unverified"
    assert "秘密结论" not in out["answer"]
    assert "无法校验" in out["answer"]
    assert out["parse_status"] in {"MISSING", "INVALID"}
    assert out["summary"] == {"claims": 0, "supported": 0, "withheld": 0}
