"""The LLM judge against a local fake OpenAI-compatible server (never the internet)."""

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from diagnosis.services.evaluation_config import evaluation_judge
from diagnosis.services.producers.judges import DeterministicJudge, LLMJudge

from .builders import claim, evaluate, executor, layer_of, retrieval, session

EVIDENCE = [retrieval("inv-1", "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。")]
CLAIM = claim("c1", "order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽"))


class FakeLLM(BaseHTTPRequestHandler):
    """Plays the scripted answers in order (the last one repeats) and records every request."""

    script: list[str] = []
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        step = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        if step == "slow":
            time.sleep(0.6)
            step = "ok"
        if step.startswith("http"):
            self._send(int(step[4:]), {"error": "nope"})
            return
        content = {
            "ok": json.dumps({"verdict": "CONTRADICTED", "rationale": "the model says so"}),
            "malformed": "this is {not json",
            "bad_verdict": json.dumps({"verdict": "MAYBE"}),
        }[step]
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # the client gave up (timeout test)
            self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_llm():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeLLM)
    server.daemon_threads = True
    FakeLLM.script, FakeLLM.requests = ["ok"], []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    cache.clear()
    yield FakeLLM, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    cache.clear()


def llm_judge(base_url: str) -> LLMJudge:
    return LLMJudge(
        base_url=base_url,
        model="test-model",
        api_key="k-test",
        timeout=0.3,
        retries=2,
        backoff=0,
        cache_seconds=60,
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
