"""Verifier: per-claim verdicts, absence claims, changed numbers and the session verdict."""

import pytest

from .builders import ScriptedJudge, claim, evaluate, executor, layer_of, retrieval, session

# Verdicts of the rule judge this learned judge does not reproduce at its leave-one-file-out
# thresholds (issue 20): kept, strict, so that a model that gets them right again turns them green.
LEARNED = pytest.mark.xfail(strict=True, reason="the learned judge decides otherwise at its thresholds (issue 20)")

KB = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。连接池最大连接数为 50。"
LOGS = "HikariPool-1 - Connection is not available, request timed out after 30000ms. 错误率升至 35%。"
INVOCATIONS = [retrieval("inv-1", KB), retrieval("inv-2", LOGS, source="loki://order-service", tool="query_logs")]


def verify(*claims, judge=None, **kw) -> dict:
    return layer_of(
        evaluate(session(invocations=INVOCATIONS, executor_output=executor(*claims), **kw), judge=judge),
        "verifier_evaluation",
    )


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
        pytest.param("payment-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"), "CONTRADICTED", marks=LEARNED),
        # Chinese claims over English logs: the glossary bridges the wording, the facts must agree.
        ("order-service 的连接在 30000ms 后超时", ("inv-2#1", "request timed out after 30000ms"), "SUPPORTED"),
        # The service is named elsewhere in the cited ref (and in its source), not in the excerpt.
        ("order-service 错误率升至 35%", ("inv-2#1", "错误率升至 35%"), "SUPPORTED"),
        # A negation the evidence does not share.
        pytest.param("数据库连接池没有耗尽", ("inv-1#1", "数据库连接池耗尽"), "CONTRADICTED", marks=LEARNED),
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
# The session verdict is under test here, not the judge: each claim's verdict is given.
SCRIPT = ScriptedJudge(
    {"order-service 的数据库连接池耗尽": "SUPPORTED", "request timed out after 30s": "SUPPORTED",
     "缓存命中率下降": "UNSUPPORTED", "错误率升至 45%": "CONTRADICTED"}
)  # fmt: skip


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
    layer = verify(*unique, judge=SCRIPT)

    assert (layer["verdict"], layer["groundedness_score"]) == (verdict, groundedness)


def test_thresholds_are_configurable(settings):
    settings.SELFEVAL_VERIFIER_THRESHOLDS = {**settings.SELFEVAL_VERIFIER_THRESHOLDS, "pass_groundedness": 0.6}

    layer = verify(SUPPORTED, UNSUPPORTED_MINOR, judge=SCRIPT)

    assert layer["verdict"] == "PASS"
    assert layer["thresholds"]["pass_groundedness"] == 0.6


def test_missing_executor_output_is_low_confidence_with_no_claims_judged():
    layer = layer_of(evaluate(session(invocations=INVOCATIONS, executor_output=None)), "verifier_evaluation")

    assert layer["verdict"] == "LOW_CONFID"
    assert layer["groundedness_score"] is None
    assert layer["claim_checks"] == []
    assert layer["executor_output_parse_status"]["status"] == "MISSING"
    assert "MISSING" in layer["rationale"]


def test_invalid_executor_output_keeps_the_raw_output_and_says_why():
    raw = {"version": "executor_evidence_v2", "claims": [{"claimId": "c1"}], "finalAnswer": "连接池耗尽"}
    layer = layer_of(evaluate(session(invocations=INVOCATIONS, executor_output=raw)), "verifier_evaluation")

    assert layer["verdict"] == "LOW_CONFID"
    assert layer["executor_output_parse_status"]["status"] == "INVALID"
    assert layer["executor_structured_output"] == raw
    assert layer["claim_checks"] == []


def test_final_answer_is_never_a_source_of_facts():
    output = executor(claim("c1", "缓存命中率下降", ("inv-1#1", "连接池耗尽")), final_answer="缓存命中率下降")
    layer = layer_of(evaluate(session(invocations=INVOCATIONS, executor_output=output)), "verifier_evaluation")

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
    assert layer_of(result, "verifier_evaluation")["round"] == expected


METRICS = (
    "redis-cache evicted_keys stayed at 0 during the incident; memory at 48%. "
    "payment-api returned 0 errors in the last hour. order-service error rate 12% at 10:07; retries: 0."
)
ZH_METRICS = "pod order-7f9c 在事故期间重启次数为 0，内存使用率 40%。过去一小时 payment-service 的错误数为 0。"
CAUSES = (
    "Feature flag new-pricing enabled at 11:02. p99 latency rose to 900ms at 11:05. "
    "Postmortem: the queue backlog was caused by the consumer crash. "
    "PUT to bucket media-prod denied: QuotaExceeded."
)
ZH_CAUSES = "10:05 发布了 v2.3.1。10:07 起错误率上升到 12%。因磁盘写满，mysql-primary 停止写入。"


@pytest.mark.parametrize(
    ("text", "evidence", "expected"),
    [
        # A zero quantity denies the activity a positive claim affirms ...
        ("redis-cache was evicting keys during the incident", "evicted_keys stayed at 0", "CONTRADICTED"),
        pytest.param(
            "payment-api was returning errors", "payment-api returned 0 errors", "CONTRADICTED", marks=LEARNED
        ),
        # ... and supports the claim that negates it.
        ("redis-cache evicted no keys during the incident", "evicted_keys stayed at 0", "SUPPORTED"),
        # A zero about another quantity of the same sentence is no contradiction.
        ("order-service error rate reached 12% at 10:07", "order-service error rate 12% at 10:07", "SUPPORTED"),
    ],
)
def test_zero_quantities(text, evidence, expected):
    layer = layer_of(
        evaluate(
            session(
                invocations=[retrieval("inv-1", METRICS)],
                executor_output=executor(claim("c1", text, ("inv-1#1", evidence))),
            )
        ),
        "verifier_evaluation",
    )

    assert verdicts(layer) == {"c1": expected}, layer["claim_checks"][0]["rationale"]


@pytest.mark.parametrize(
    ("text", "evidence", "expected"),
    [
        ("pod order-7f9c 在事故期间发生了重启", "pod order-7f9c 在事故期间重启次数为 0", "CONTRADICTED"),
        # The comma ends the zero's phrase: memory is not zeroed.
        ("pod order-7f9c 内存使用率 40%", "内存使用率 40%", "SUPPORTED"),
        ("过去一小时 payment-service 没有错误", "过去一小时 payment-service 的错误数为 0", "SUPPORTED"),
    ],
)
def test_zero_quantities_in_chinese(text, evidence, expected):
    layer = layer_of(
        evaluate(
            session(
                invocations=[retrieval("inv-1", ZH_METRICS)],
                executor_output=executor(claim("c1", text, ("inv-1#1", evidence))),
                language="zh",
            )
        ),
        "verifier_evaluation",
    )

    assert verdicts(layer) == {"c1": expected}, layer["claim_checks"][0]["rationale"]


@pytest.mark.parametrize(
    ("text", "evidence", "expected"),
    [
        # Both facts are verified, the link between them is not: correlation is not cause.
        (
            "Enabling the new-pricing flag caused the latency rise",
            ["Feature flag new-pricing enabled at 11:02"],
            "UNSUPPORTED",
        ),
        pytest.param(
            "p99 latency rose to 900ms because the new-pricing flag was enabled",
            ["Feature flag new-pricing enabled at 11:02", "p99 latency rose to 900ms"],
            "UNSUPPORTED",
            marks=LEARNED,
        ),
        pytest.param(
            "v2.3.1 的发布导致错误率上升到 12%",
            ["10:05 发布了 v2.3.1", "10:07 起错误率上升到 12%"],
            "UNSUPPORTED",
            marks=LEARNED,
        ),
        # The evidence states the link, in other words than the claim.
        (
            "The consumer crash caused the queue backlog",
            ["the queue backlog was caused by the consumer crash"],
            "SUPPORTED",
        ),
        ("mysql-primary 停止写入是由于磁盘写满", ["因磁盘写满，mysql-primary 停止写入"], "SUPPORTED"),
        # Log grammar "<failed>: <reason>" names the reason.
        (
            "PUT to media-prod was denied because of QuotaExceeded",
            ["PUT to bucket media-prod denied: QuotaExceeded"],
            "SUPPORTED",
        ),
        # Without causal language the same facts still pass.
        ("p99 latency rose to 900ms at 11:05", ["p99 latency rose to 900ms at 11:05"], "SUPPORTED"),
    ],
)
def test_causal_claims_need_the_evidence_to_state_the_link(text, evidence, expected):
    invocations = [retrieval("inv-1", CAUSES), retrieval("inv-2", ZH_CAUSES)]
    bindings = [("inv-2#1" if any("\u4e00" <= ch <= "\u9fff" for ch in e) else "inv-1#1", e) for e in evidence]
    layer = layer_of(
        evaluate(session(invocations=invocations, executor_output=executor(claim("c1", text, *bindings)))),
        "verifier_evaluation",
    )

    assert verdicts(layer) == {"c1": expected}, layer["claim_checks"][0]["rationale"]
