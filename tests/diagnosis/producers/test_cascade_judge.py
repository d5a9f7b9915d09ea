"""The cascade: deterministic first, the LLM (an httpx MockTransport, never a network) only for the undecided band."""

import json

import httpx
import pytest
from django.core.cache import cache

from diagnosis.constants import ClaimBand
from diagnosis.messages import message
from diagnosis.services.evaluation_config import evaluation_config, evaluation_config_reset, evaluation_judge
from diagnosis.services.producers.judges import CascadeJudge, DeterministicJudge, Judgement, LLMJudge, judge_build

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


class Banded:
    """A first judge whose band per claim is given: the cascade's rule is what is under test."""

    name = "deterministic"

    def __init__(self, bands: dict[str, ClaimBand]) -> None:
        self.bands = bands

    def close(self) -> None:
        pass

    def judge(self, item) -> Judgement:
        band = self.bands[item.claim_id]
        why = message("judge.nothing_aligned")
        return Judgement(band.verdict, why, self.name, p_supported=0.42, p_contradicted=0.07, band=band, reasons=(why,))


def cascade(transport, bands: dict[str, ClaimBand]) -> CascadeJudge:
    first = Banded(bands)
    llm = LLMJudge(
        base_url="http://llm.test/v1",
        model="m",
        fallback=first,
        api_key="",
        timeout=5,
        retries=0,
        backoff=0,
        max_wait=0,
        cache_seconds=60,
        transport=transport,
    )
    return CascadeJudge(first=first, second=llm)


BANDS = {"s": ClaimBand.SUPPORTED, "x": ClaimBand.CONTRADICTED, "n": ClaimBand.UNSUPPORTED, "u": ClaimBand.UNDECIDED}
CLAIMS = [claim(name, f"checkout-api 调用 payment-service 超时 {name}", ("inv-1#1", "共 1,204 次")) for name in BANDS]


def layer_for(judge) -> dict:
    data = session(invocations=[retrieval("inv-1", EVIDENCE)], executor_output=executor(*CLAIMS))
    return layer_of(evaluate(data, judge=judge), "verifier_evaluation")


def test_only_undecided_claims_go_to_the_llm(llm_calls):
    calls, transport = llm_calls

    layer = layer_for(cascade(transport, BANDS))

    checks = {c["claimId"]: c for c in layer["claim_checks"]}
    for name in ("s", "x", "n"):
        assert (checks[name]["judge"], checks[name]["decided_by"], checks[name]["escalated"]) == (
            "deterministic", "deterministic", False,
        )  # fmt: skip
        assert checks[name]["verdict"] == BANDS[name].verdict
    undecided = checks["u"]
    assert (undecided["verdict"], undecided["judge"], undecided["escalated"]) == ("SUPPORTED", "llm:m", True)
    # The LLM decided; the scores and band that sent it there stay the first judge's.
    assert (undecided["decided_by"], undecided["band"], undecided["p_supported"]) == ("llm", "undecided", 0.42)
    assert "the model read it so" in undecided["rationale"]
    assert "escalated by the deterministic judge" in undecided["rationale"]
    assert len(calls) == 1 and "超时 u" in calls[0]["messages"][1]["content"]
    assert layer["judge"] == {
        "name": "cascade", "fallback_claims": [], "llm_claims": ["u"], "llm_count": 1, "escalated_claims": ["u"],
    }  # fmt: skip


def test_an_unreachable_llm_leaves_the_deterministic_verdict(llm_calls):
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    layer = layer_for(cascade(httpx.MockTransport(down), BANDS))

    check = {c["claimId"]: c for c in layer["claim_checks"]}["u"]
    assert (check["verdict"], check["judge"], check["decided_by"]) == (
        "UNSUPPORTED", "deterministic(llm-fallback)", "deterministic",
    )  # fmt: skip
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
