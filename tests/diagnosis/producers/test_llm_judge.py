"""The LLM judge against a local fake OpenAI-compatible server (never the internet)."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from diagnosis.services.evaluation_config import evaluation_judge
from diagnosis.services.producers.judges import DeterministicJudge, LLMJudge
from diagnosis.services.producers.judges.llm import retry_after_seconds

from .builders import claim, evaluate, executor, layer_of, retrieval, session

EVIDENCE = [retrieval("inv-1", "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。")]
CLAIM = claim("c1", "order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"))


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def fake_llm(fake_openai):
    return fake_openai, fake_openai.url


def llm_judge(base_url: str, **options) -> LLMJudge:
    return LLMJudge(
        base_url=base_url,
        model="test-model",
        api_key="k-test",
        **{"timeout": 0.3, "retries": 2, "backoff": 0, "max_wait": 30, "cache_seconds": 60, **options},
        fallback=DeterministicJudge(),
    )


def judge_claim(judge) -> dict:
    return layer_of(
        evaluate(session(invocations=EVIDENCE, executor_output=executor(CLAIM)), judge=judge), "verifier_evaluation"
    )


def test_llm_verdict_is_used_and_the_request_is_openai_compatible(fake_llm):
    server, url = fake_llm
    layer = judge_claim(llm_judge(url))

    check = layer["claim_checks"][0]
    assert (check["verdict"], check["judge"], check["rationale"]) == (
        "CONTRADICTED",
        "llm:test-model",
        "the model says so",
    )
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == "Bearer k-test"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert "连接池耗尽" in request["body"]["messages"][1]["content"]


@pytest.mark.parametrize("failure", ["malformed", "bad_verdict", "http500", "slow"])
def test_failing_llm_falls_back_to_the_deterministic_judge_after_retries(fake_llm, failure):
    server, url = fake_llm
    server.script = [failure]

    layer = judge_claim(llm_judge(url))

    check = layer["claim_checks"][0]
    assert check["verdict"] == "SUPPORTED"  # the deterministic judge's answer
    assert check["judge"] == "deterministic(llm-fallback)"
    assert check["rationale"].startswith("LLM judge unavailable")
    assert layer["judge"]["fallback_claims"] == ["c1"]
    if failure != "slow":  # a timed-out request may still be on its way when the test looks
        assert len(server.requests) == 3


def test_a_transient_error_is_retried(fake_llm):
    server, url = fake_llm
    server.script = ["http503", "malformed", "ok"]

    check = judge_claim(llm_judge(url))["claim_checks"][0]

    assert check["verdict"] == "CONTRADICTED"
    assert len(server.requests) == 3


def test_an_authentication_error_is_not_retried(fake_llm):
    server, url = fake_llm
    server.script = ["http401"]

    check = judge_claim(llm_judge(url))["claim_checks"][0]

    assert check["judge"] == "deterministic(llm-fallback)"
    assert "HTTP 401" in check["rationale"]
    assert len(server.requests) == 1


def test_answers_are_cached_by_input(fake_llm):
    server, url = fake_llm
    judge = llm_judge(url)

    first = judge_claim(judge)["claim_checks"][0]
    second = judge_claim(judge)["claim_checks"][0]

    assert first["verdict"] == second["verdict"] == "CONTRADICTED"
    assert len(server.requests) == 1
    other = claim("c1", "order-service 的数据库连接池耗尽并返回 5xx", ("inv-1#1", "连接池耗尽"))
    evaluate(session(invocations=EVIDENCE, executor_output=executor(other)), judge=judge)
    assert len(server.requests) == 2


def test_failures_are_not_cached(fake_llm):
    server, url = fake_llm
    server.script = ["malformed", "malformed", "malformed", "ok"]
    judge = llm_judge(url)

    assert judge_claim(judge)["claim_checks"][0]["judge"] == "deterministic(llm-fallback)"
    assert judge_claim(judge)["claim_checks"][0]["judge"] == "llm:test-model"


def test_code_guards_run_before_the_llm(fake_llm):
    server, url = fake_llm
    absence = claim("c1", "已排除网络问题", ("$.no_evidence", ""))

    result = evaluate(session(invocations=EVIDENCE, executor_output=executor(absence)), judge=llm_judge(url))

    assert layer_of(result, "verifier_evaluation")["claim_checks"][0]["verdict"] == "NO_EVIDENCE"
    assert server.requests == []


def test_judge_is_chosen_by_setting_and_built_once_per_process(settings, fake_llm):
    _, url = fake_llm
    assert isinstance(evaluation_judge(), DeterministicJudge)

    settings.SELFEVAL_JUDGE = "llm"
    settings.SELFEVAL_LLM_BASE_URL, settings.SELFEVAL_LLM_MODEL = url, "m"
    judge = evaluation_judge()
    assert isinstance(judge, LLMJudge) and judge.model == "m"
    assert evaluation_judge() is judge  # one judge (one HTTP client) for every evaluation

    settings.SELFEVAL_LLM_TIMEOUT = 3.0  # a changed setting closes the judge and builds a new one
    assert judge._client.is_closed
    assert evaluation_judge() is not judge and evaluation_judge().timeout == 3.0

    settings.SELFEVAL_LLM_BASE_URL = ""
    with pytest.raises(ImproperlyConfigured):
        evaluation_judge()
    settings.SELFEVAL_JUDGE = "oracle"
    with pytest.raises(ImproperlyConfigured):
        evaluation_judge()


# --- retries through tenacity: Retry-After honoured, else a jittered exponential backoff -----------------------


def test_the_wait_a_throttled_endpoint_asks_for_is_honoured(fake_llm):
    server, url = fake_llm
    server.script = ["http429:7", "http503:3", "ok"]
    waits: list[float] = []

    check = judge_claim(llm_judge(url, backoff=1, sleep=waits.append))["claim_checks"][0]

    assert check["verdict"] == "CONTRADICTED" and len(server.requests) == 3
    assert waits == [7.0, 3.0]  # what the server said, not the backoff


def test_an_http_date_retry_after_is_read_as_the_seconds_until_then(fake_llm):
    server, url = fake_llm
    in_five_seconds = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    server.script = [f"http429:{in_five_seconds}", "ok"]
    waits: list[float] = []

    assert judge_claim(llm_judge(url, sleep=waits.append))["claim_checks"][0]["verdict"] == "CONTRADICTED"
    (wait,) = waits
    assert 3 <= wait <= 5


def test_an_endpoint_asking_for_longer_than_the_longest_wait_is_not_asked_again(fake_llm):
    server, url = fake_llm
    server.script = ["http503:120", "ok"]
    waits: list[float] = []

    check = judge_claim(llm_judge(url, max_wait=30, sleep=waits.append))["claim_checks"][0]

    assert check["judge"] == "deterministic(llm-fallback)"
    assert "HTTP 503 from the LLM endpoint (Retry-After: 120 s)" in check["rationale"]
    assert len(server.requests) == 1 and waits == []


def test_without_retry_after_the_waits_grow_with_random_jitter_up_to_the_longest_wait(fake_llm):
    server, url = fake_llm
    server.script = ["http500"]
    runs: list[list[float]] = []
    for _ in range(2):
        runs.append([])
        cache.clear()
        judge_claim(llm_judge(url, retries=4, backoff=1, max_wait=3, sleep=runs[-1].append))

    for waits in runs:
        first, second, third, fourth = waits
        assert 1 <= first <= 2 and 2 <= second <= 3  # 1 s, then 2 s, each with up to 1 s of jitter
        assert third == fourth == 3  # capped
    assert runs[0][:2] != runs[1][:2]  # two workers failing together do not retry together
    assert len(server.requests) == 10


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("12", 12.0),
        ("0", 0.0),
        ("Wed, 21 Oct 2026 07:28:30 GMT", 30.0),
        ("Wed, 21 Oct 2026 07:27:00 GMT", 0.0),  # in the past: at once
        ("soon", None),
        ("-3", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_values(value, seconds):
    now = datetime(2026, 10, 21, 7, 28, tzinfo=UTC)

    assert retry_after_seconds(value, now=now) == seconds
