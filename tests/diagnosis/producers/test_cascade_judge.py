"""The cascade: deterministic first, the LLM (an httpx MockTransport, never a network) only for unaligned claims."""

import json

import httpx
import pytest
from django.core.cache import cache

from diagnosis.services.evaluation_config import evaluation_config, evaluation_config_reset, evaluation_judge
from diagnosis.services.producers.judges import CascadeJudge, DeterministicJudge, LLMJudge, judge_build

from .builders import claim, evaluate, executor, layer_of, retrieval, session

EVIDENCE = (
    "checkout-api 调用 payment-service 超时（timeout 3s），共 1,204 次。过去一小时 payment-service 的 5xx 错误数为 0。"
)


@pytest.fixture
def llm_calls():
    cache.clear()
    calls: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(json.loads(request.content))
        verdict = {"verdict": "SUPPORTED", "rationale": "the model read it so"}
        return httpx.Response(200, json={"choices": [{"message": {"content": json.dumps(verdict)}}]})

    yield calls, httpx.MockTransport(answer)
    cache.clear()


def cascade(transport) -> CascadeJudge:
    deterministic = DeterministicJudge()
    llm = LLMJudge(
        base_url="http://llm.test/v1",
        model="m",
        fallback=deterministic,
        api_key="",
        timeout=5,
        retries=0,
        backoff=0,
        max_wait=0,
        cache_seconds=60,
        transport=transport,
    )
    return CascadeJudge(first=deterministic, second=llm)


def layer_for(judge, *claims) -> dict:
    data = session(invocations=[retrieval("inv-1", EVIDENCE)], executor_output=executor(*claims))
    return layer_of(evaluate(data, judge=judge), "verifier_evaluation")


def test_only_unaligned_claims_go_to_the_llm(llm_calls):
    calls, transport = llm_calls
    supported = claim(
        "s", "checkout-api 调用 payment-service 超时", ("inv-1#1", "checkout-api 调用 payment-service 超时")
    )
    conflict = claim("x", "checkout-api 调用 payment-service 超时，共 2,000 次", ("inv-1#1", "共 1,204 次"))
    unaligned = claim(
        "u", "payment-service 的数据库慢查询导致超时", ("inv-1#1", "checkout-api 调用 payment-service 超时")
    )

    layer = layer_for(cascade(transport), supported, conflict, unaligned)

    checks = {c["claimId"]: c for c in layer["claim_checks"]}
    assert (checks["s"]["verdict"], checks["s"]["judge"], checks["s"]["escalated"]) == (
        "SUPPORTED",
        "deterministic",
        False,
    )
    assert (checks["x"]["verdict"], checks["x"]["judge"]) == ("CONTRADICTED", "deterministic")
    assert (checks["u"]["verdict"], checks["u"]["judge"], checks["u"]["escalated"]) == ("SUPPORTED", "llm:m", True)
    assert "the model read it so" in checks["u"]["rationale"]
    assert "escalated by the deterministic judge: not in the evidence" in checks["u"]["rationale"]
    assert len(calls) == 1 and "数据库慢查询" in calls[0]["messages"][1]["content"]
    assert layer["judge"] == {
        "name": "cascade", "fallback_claims": [], "llm_claims": ["u"], "llm_count": 1, "escalated_claims": ["u"],
    }  # fmt: skip


def test_the_claim_check_row_records_the_deciding_judge(llm_calls):
    _, transport = llm_calls
    unaligned = claim(
        "u", "payment-service 的数据库慢查询导致超时", ("inv-1#1", "checkout-api 调用 payment-service 超时")
    )
    data = session(invocations=[retrieval("inv-1", EVIDENCE)], executor_output=executor(unaligned))

    (result,) = evaluate(data, judge=cascade(transport)).claim_results

    assert result.judge == "llm:m" and "[escalated by the deterministic judge" in result.rationale


def test_an_unreachable_llm_leaves_the_deterministic_verdict(llm_calls):
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    unaligned = claim(
        "u", "payment-service 的数据库慢查询导致超时", ("inv-1#1", "checkout-api 调用 payment-service 超时")
    )
    layer = layer_for(cascade(httpx.MockTransport(down)), unaligned)

    check = layer["claim_checks"][0]
    assert (check["verdict"], check["judge"]) == ("UNSUPPORTED", "deterministic(llm-fallback)")
    assert layer["judge"]["llm_count"] == 1 and layer["judge"]["fallback_claims"] == ["u"]


def test_one_judge_per_process_rebuilt_when_the_setting_changes(settings):
    evaluation_config_reset()
    first = evaluation_judge()
    assert evaluation_judge() is first and isinstance(first, DeterministicJudge)

    settings.SELFEVAL_JUDGE = "cascade"
    settings.SELFEVAL_LLM_BASE_URL, settings.SELFEVAL_LLM_MODEL = "http://llm.test/v1", "m"
    built = evaluation_judge()
    assert isinstance(built, CascadeJudge) and built is not first
    assert isinstance(judge_build(config=evaluation_config()), CascadeJudge)
    evaluation_config_reset()
    assert built.second._client.is_closed
