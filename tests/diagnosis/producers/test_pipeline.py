"""The pure pipeline: which producers run, isolation of a failing one, claim results, attribution."""

import pytest

from diagnosis.services.producers import pipeline
from diagnosis.services.producers.judges import DeterministicJudge

from .builders import claim, evaluate, executor, inv, layer_of, retrieval, session

KB = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。"
GOOD = claim("c1", "order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"))
ALERT = {"name": "HighErrorRate", "service": "order-service"}


def test_chat_session_gets_rule_and_verifier_layers():
    result = evaluate(session(invocations=[retrieval("inv-1", KB)], executor_output=executor(GOOD)))

    assert set(result.layers) == {"rule_evaluation", "verifier_evaluation"}
    assert result.errors == {}
    assert result.failure_attribution == "NONE"
    (claim_result,) = result.claim_results
    assert (claim_result.claim_id, claim_result.verdict, claim_result.service) == ("c1", "SUPPORTED", "order-service")
    assert claim_result.ref_ids == ("inv-1#1",)
    assert claim_result.bindings[0].status == "VERIFIED"


def test_aiops_session_without_claims_gets_rule_and_aiops_layers():
    result = evaluate(session(mode="aiops", invocations=[retrieval("inv-1", KB)], alert=ALERT, answer="order-service"))

    assert set(result.layers) == {"rule_evaluation", "aiops_rule_evaluation"}


def test_aiops_session_with_claims_is_judged_claim_by_claim_too():
    result = evaluate(
        session(mode="aiops", invocations=[retrieval("inv-1", KB)], alert=ALERT, executor_output=executor(GOOD))
    )

    assert set(result.layers) == {"rule_evaluation", "verifier_evaluation", "aiops_rule_evaluation"}


@pytest.mark.parametrize(
    ("mode", "with_output", "inapplicable"),
    [
        ("chat", True, ("aiops_rule_evaluation",)),
        ("chat", False, ("aiops_rule_evaluation",)),  # chat always gets a verifier (LOW_CONFID)
        ("aiops", True, ()),
        ("aiops", False, ("verifier_evaluation",)),
    ],
)
def test_layers_the_session_does_not_qualify_for_are_listed(mode, with_output, inapplicable):
    result = evaluate(
        session(
            invocations=[retrieval("inv-1", KB)],
            executor_output=executor(GOOD) if with_output else None,
            mode=mode,
            alert=ALERT if mode == "aiops" else None,
        )
    )

    assert result.inapplicable_layers == inapplicable
    assert not set(result.layers) & set(inapplicable)
    assert set(result.layers) | set(inapplicable) == {"rule_evaluation", "verifier_evaluation", "aiops_rule_evaluation"}


def test_claim_service_falls_back_to_the_alert_service():
    other = claim("c1", "数据库连接池耗尽", ("inv-1#1", "连接池耗尽"))
    result = evaluate(
        session(mode="aiops", invocations=[retrieval("inv-1", KB)], alert=ALERT, executor_output=executor(other))
    )

    assert result.claim_results[0].service == "order-service"
    pod = claim("c2", "pod payment-api-5f6d7c8b9-x2x9z 被 OOMKilled", ("inv-1#1", "连接池耗尽"))
    result = evaluate(session(invocations=[retrieval("inv-1", KB)], executor_output=executor(pod)))
    assert result.claim_results[0].service == "payment-api"


@pytest.mark.parametrize(
    ("producer", "function", "missing"),
    [
        ("rule", "rule_evaluation", "rule_evaluation"),
        ("verifier", "gatekeeper_check", "verifier_evaluation"),
        ("aiops", "aiops_rule_evaluation", "aiops_rule_evaluation"),
    ],
)
def test_a_failing_producer_leaves_the_other_layers(monkeypatch, producer, function, missing):
    def explode(**kwargs):
        raise RuntimeError("producer bug")

    monkeypatch.setattr(pipeline, function, explode)
    result = evaluate(
        session(mode="aiops", invocations=[retrieval("inv-1", KB)], alert=ALERT, executor_output=executor(GOOD))
    )

    assert result.errors == {producer: "RuntimeError: producer bug"}
    assert missing not in result.layers
    assert set(result.layers) == {"rule_evaluation", "verifier_evaluation", "aiops_rule_evaluation"} - {missing}
    if producer == "verifier":
        assert result.claim_results == []


def test_a_judge_failing_on_one_claim_leaves_that_claim_unsupported_and_the_layer_whole(caplog):
    class BrokenOnOneClaim:
        name = "deterministic"
        inner = DeterministicJudge()

        def judge(self, item):
            if item.claim_id == "c2":
                raise ValueError("judge down")
            return self.inner.judge(item)

    other = claim("c2", "order-service 请求排队超时", ("inv-1#1", "请求排队超时"))
    result = evaluate(
        session(invocations=[retrieval("inv-1", KB)], executor_output=executor(GOOD, other)), judge=BrokenOnOneClaim()
    )

    assert result.errors == {}
    checks = {c["claimId"]: c for c in layer_of(result, "verifier_evaluation")["claim_checks"]}
    assert checks["c1"]["verdict"] == "SUPPORTED"
    assert checks["c2"]["verdict"] == "UNSUPPORTED"
    assert checks["c2"]["rationale_code"] == "judge.error"
    assert checks["c2"]["reasons"][0]["code"] == "judge.error"
    assert "ValueError: judge down" in checks["c2"]["rationale"]
    assert "judge down" in caplog.text


@pytest.mark.parametrize(
    ("invocations", "claims", "attribution"),
    [
        ([retrieval("inv-1", KB)], [GOOD], "NONE"),
        ([retrieval("inv-1", KB, status="FAILED")], [GOOD], "TOOL_ERROR"),
        ([retrieval("inv-1", KB, level="NONE")], [claim("c1", "已排除网络问题", ("$.no_evidence", ""))], "RETRIEVAL_MISS"),
        ([retrieval("inv-1", KB)], [claim("c1", "已排除网络问题", ("$.no_evidence", ""))], "RETRIEVAL_MISS"),
        ([retrieval("inv-1", KB)], [claim("c1", "order-service 的数据库连接池耗尽", ("inv-1#1", "线程池耗尽"))], "CITATION_FAILURE"),
        ([retrieval("inv-1", KB)], [claim("c1", "order-service 的数据库连接池耗尽", ("inv-404", "x"))], "CITATION_FAILURE"),
        ([retrieval("inv-1", KB)], [claim("c1", "order-service 的内存泄漏导致 OOM", ("inv-1#1", "连接池耗尽"))],
         "UNSUPPORTED_REASONING"),
        ([retrieval("inv-1", KB), inv("inv-2", tool="query_logs", status="FAILED")], [GOOD], "NONE"),
    ],
)  # fmt: skip
def test_failure_attribution_precedence(invocations, claims, attribution):
    result = evaluate(session(invocations=invocations, executor_output=executor(*claims)))

    assert result.failure_attribution == attribution


def test_missing_executor_output_is_a_citation_failure():
    assert evaluate(session(invocations=[retrieval("inv-1", KB)])).failure_attribution == "CITATION_FAILURE"


def test_aiops_report_about_the_wrong_alert_is_unsupported_reasoning():
    result = evaluate(
        session(
            mode="aiops",
            invocations=[retrieval("inv-1", KB), inv("l", tool="query_logs"), inv("m", tool="query_metrics")],
            alert=ALERT,
            active_alerts=[{"name": "DiskFull", "service": "log-agent"}],
            answer="## Root cause\nlog-agent DiskFull",
        )
    )

    assert layer_of(result, "aiops_rule_evaluation")["verdict"] == "FAIL"
    assert result.failure_attribution == "UNSUPPORTED_REASONING"


def test_evaluating_twice_gives_the_same_result():
    data = session(invocations=[retrieval("inv-1", KB)], executor_output=executor(GOOD), previous_round=1,
                   previous_fingerprint="fp-1")  # fmt: skip

    assert evaluate(data) == evaluate(data)
    assert evaluate(data).round == 1
