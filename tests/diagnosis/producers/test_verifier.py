"""Verifier: per-claim verdicts, absence claims, changed numbers and the session verdict."""

import pytest

from diagnosis.services.producers.pipeline import evaluate

from .builders import claim, executor, retrieval, session

KB = "当 order-service 的数据库连接池耗尽时，请求排队超时并返回 5xx。连接池最大连接数为 50。"
LOGS = "HikariPool-1 - Connection is not available, request timed out after 30000ms. 错误率升至 35%。"
INVOCATIONS = [retrieval("inv-1", KB), retrieval("inv-2", LOGS, source="loki://order-service", tool="query_logs")]


def verify(*claims, **kw) -> dict:
    return evaluate(session(invocations=INVOCATIONS, executor_output=executor(*claims), **kw)).layers[
        "verifier_evaluation"
    ]


def verdicts(layer: dict) -> dict[str, str]:
    return {c["claimId"]: c["verdict"] for c in layer["claim_checks"]}


@pytest.mark.parametrize(
    ("text", "evidence", "expected"),
    [
        ("order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"), "SUPPORTED"),
        ("request timed out after 30s", ("inv-2#1", "timed out after 30000ms"), "SUPPORTED"),
        ("错误率升至 35%", ("inv-2#1", "错误率升至 35%"), "SUPPORTED"),
        (
            "The connection pool of order-service is not available",
            ("inv-2#1", "Connection is not available"),
            "SUPPORTED",
        ),
        # Changed numbers are contradictions, not support.
        ("request timed out after 10 seconds", ("inv-2#1", "timed out after 30000ms"), "CONTRADICTED"),
        ("错误率升至 45%", ("inv-2#1", "错误率升至 35%"), "CONTRADICTED"),
        ("连接池最大连接数为 100", ("inv-1#1", "连接池最大连接数为 50"), "CONTRADICTED"),
        ("payment-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"), "CONTRADICTED"),
        # Chinese claims over English logs: the glossary bridges the wording, the facts must agree.
        ("order-service 的数据库连接在 30000ms 后超时", ("inv-2#1", "request timed out after 30000ms"), "SUPPORTED"),
        # The service is named elsewhere in the cited ref (and in its source), not in the excerpt.
        ("order-service 错误率升至 35%", ("inv-2#1", "错误率升至 35%"), "SUPPORTED"),
        # A negation the evidence does not share.
        ("数据库连接池没有耗尽", ("inv-1#1", "数据库连接池耗尽"), "CONTRADICTED"),
        # Real excerpt, but it does not carry the claim.
        ("order-service 的内存泄漏导致 OOM", ("inv-1#1", "连接池耗尽"), "UNSUPPORTED"),
        ("缓存命中率下降", ("inv-1#1", "连接池耗尽"), "UNSUPPORTED"),
        # Citations that fail the gatekeeper support nothing.
        ("order-service 的数据库连接池耗尽", ("inv-1#1", "连接池已经彻底耗尽"), "UNSUPPORTED"),
        ("order-service 的数据库连接池耗尽", ("inv-7#1", "连接池耗尽"), "UNSUPPORTED"),
    ],
)
def test_claim_verdicts(text, evidence, expected):
    layer = verify(claim("c1", text, evidence))

    assert verdicts(layer) == {"c1": expected}, layer["claim_checks"][0]["rationale"]


@pytest.mark.parametrize(
    "text",
    ["已排除网络问题", "确认没有慢查询", "不存在内存泄漏", "排除了磁盘故障", "Network issues were ruled out",
     "Confirmed none of the pods restarted", "No slow queries were found"],
)  # fmt: skip
def test_absence_claims_bound_only_to_no_evidence_are_never_supported(text):
    layer = verify(claim("c1", text, ("$.no_evidence", "")))
    check = layer["claim_checks"][0]

    assert check["verdict"] == "NO_EVIDENCE"
    assert check["absence_claim"] is True
    assert "does not prove absence" in check["rationale"]


def test_a_plain_claim_bound_only_to_no_evidence_is_no_evidence_too():
    layer = verify(claim("c1", "order-service 的数据库连接池耗尽", ("$.no_evidence", "")))

    assert verdicts(layer) == {"c1": "NO_EVIDENCE"}
    assert layer["claim_checks"][0]["absence_claim"] is False


def test_a_claim_citing_nothing_is_unsupported():
    assert verdicts(verify(claim("c1", "order-service 的数据库连接池耗尽"))) == {"c1": "UNSUPPORTED"}


def test_facts_checked_report_the_values():
    layer = verify(claim("c1", "请求超时 10 秒，错误率 35%", ("inv-2#1", "timed out after 30000ms...错误率升至 35%")))
    facts = {f["text"]: (f["status"], f["evidence_values"]) for f in layer["facts_checked"]}

    assert facts == {"10秒": ("MISMATCH", ["30000ms"]), "35%": ("STATED", [])}
    assert layer["critical_fact_count"] == 2


SUPPORTED = claim("s", "order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"))
SUPPORTED_MINOR = claim("m", "request timed out after 30s", ("inv-2#1", "timed out after 30000ms"), critical=False)
UNSUPPORTED_MINOR = claim("u", "缓存命中率下降", ("inv-1#1", "连接池耗尽"), critical=False)
UNSUPPORTED_CRITICAL = claim("uc", "缓存命中率下降", ("inv-1#1", "连接池耗尽"))
CONTRADICTED_CRITICAL = claim("x", "错误率升至 45%", ("inv-2#1", "错误率升至 35%"))
CONTRADICTED_MINOR = claim("xm", "错误率升至 45%", ("inv-2#1", "错误率升至 35%"), critical=False)


@pytest.mark.parametrize(
    ("claims", "verdict", "groundedness"),
    [
        ([SUPPORTED, SUPPORTED_MINOR], "PASS", 1.0),
        ([SUPPORTED, SUPPORTED_MINOR, SUPPORTED, UNSUPPORTED_MINOR], "PASS", 0.833),
        ([SUPPORTED, UNSUPPORTED_MINOR], "LOW_CONFID", 0.667),
        ([SUPPORTED, SUPPORTED, SUPPORTED, UNSUPPORTED_CRITICAL], "LOW_CONFID", 0.75),
        ([SUPPORTED, SUPPORTED, SUPPORTED, SUPPORTED, CONTRADICTED_MINOR], "LOW_CONFID", 0.889),
        ([SUPPORTED, SUPPORTED, CONTRADICTED_CRITICAL], "REJECT", 0.667),
        ([SUPPORTED_MINOR, UNSUPPORTED_CRITICAL], "REJECT", 0.333),
    ],
)
def test_session_verdict_follows_the_thresholds(claims, verdict, groundedness):
    unique = [{**c, "claimId": f"{c['claimId']}{i}"} for i, c in enumerate(claims)]
    layer = verify(*unique)

    assert (layer["verdict"], layer["groundedness_score"]) == (verdict, groundedness)


def test_thresholds_are_configurable(settings):
    settings.SELFEVAL_VERIFIER_THRESHOLDS = {"pass_groundedness": 0.6}

    layer = verify(SUPPORTED, UNSUPPORTED_MINOR)

    assert layer["verdict"] == "PASS"
    assert layer["thresholds"]["pass_groundedness"] == 0.6


def test_missing_executor_output_is_low_confidence_with_no_claims_judged():
    layer = evaluate(session(invocations=INVOCATIONS, executor_output=None)).layers["verifier_evaluation"]

    assert layer["verdict"] == "LOW_CONFID"
    assert layer["groundedness_score"] is None
    assert layer["claim_checks"] == []
    assert layer["executor_output_parse_status"]["status"] == "MISSING"
    assert "MISSING" in layer["rationale"]


def test_invalid_executor_output_keeps_the_raw_output_and_says_why():
    raw = {"version": "executor_evidence_v2", "claims": [{"claimId": "c1"}], "finalAnswer": "连接池耗尽"}
    layer = evaluate(session(invocations=INVOCATIONS, executor_output=raw)).layers["verifier_evaluation"]

    assert layer["verdict"] == "LOW_CONFID"
    assert layer["executor_output_parse_status"]["status"] == "INVALID"
    assert layer["executor_structured_output"] == raw
    assert layer["claim_checks"] == []


def test_final_answer_is_never_a_source_of_facts():
    output = executor(claim("c1", "缓存命中率下降", ("inv-1#1", "连接池耗尽")), final_answer="缓存命中率下降")
    layer = evaluate(session(invocations=INVOCATIONS, executor_output=output)).layers["verifier_evaluation"]

    assert verdicts(layer) == {"c1": "UNSUPPORTED"}
    assert "finalAnswer" not in layer["executor_structured_output"]


def test_layer_has_every_seed_field():
    layer = verify(SUPPORTED)

    assert {
        "verdict", "groundedness_score", "critical_fact_count", "claim_checks", "facts_checked", "rationale", "round",
        "traceability_version", "executor_output_parse_status", "executor_structured_output", "gatekeeper_result",
        "composer_output", "tool_trace_summary", "evidence_fingerprint",
    } <= set(layer)  # fmt: skip
    assert layer["traceability_version"] == "v1"


@pytest.mark.parametrize(
    ("previous_round", "previous_fingerprint", "fingerprint", "expected"),
    [(0, "", "fp-1", 1), (1, "fp-1", "fp-1", 1), (1, "fp-1", "fp-2", 2), (3, "fp-2", "fp-2", 3), (3, "fp-2", "", 4)],
)
def test_round_increments_only_on_new_evidence(previous_round, previous_fingerprint, fingerprint, expected):
    result = evaluate(
        session(
            invocations=INVOCATIONS,
            executor_output=executor(SUPPORTED),
            fingerprint=fingerprint,
            previous_round=previous_round,
            previous_fingerprint=previous_fingerprint,
        )
    )

    assert result.round == expected
    assert result.layers["verifier_evaluation"]["round"] == expected
