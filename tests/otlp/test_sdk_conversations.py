"""Clients nobody here wrote, unchanged, against a live server: the Langfuse SDK, Phoenix's
`phoenix.otel` with OpenInference, the plain OpenTelemetry SDK and OpenLLMetry's traceloop-sdk each
send a three-turn conversation. Each turn (a trace) becomes one session, the SDK's session id groups
them into one conversation, and nothing is refused: no span counted as rejected anywhere.

OpenLLMetry: traceloop-sdk runs as an agent runs it, in a process of its own
(tests/otlp/traceloop_agent.py), its LLM calls through the OpenAI SDK to a local fake OpenAI server.
"""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from diagnosis.models import DiagnosisSession
from otlp.models import BufferedTrace, TraceState

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = ("订单服务 5xx 突增，原因是什么？", "连接池为什么会耗尽？", "怎么修复？")
ANSWERS = ("数据库连接池耗尽。", "慢查询占住了连接。", "扩大连接池并优化慢查询。")
RUNBOOK = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。"


def turns_of(conversation_id: str) -> list[DiagnosisSession]:
    return list(DiagnosisSession.objects.filter(conversation_id=conversation_id).order_by("created_at"))


def assert_three_turns_of_one_conversation(conversation_id: str) -> list[DiagnosisSession]:
    turns = turns_of(conversation_id)
    assert [(turn.query, turn.answer) for turn in turns] == list(zip(QUESTIONS, ANSWERS, strict=True))
    assert len({turn.session_id for turn in turns}) == 3  # three sessions: a trace is one turn
    traces = BufferedTrace.objects.all()
    assert [trace.state for trace in traces] == [TraceState.INGESTED] * 3
    assert sum(trace.rejected_spans for trace in traces) == 0, [trace.error for trace in traces]
    return turns


def otlp_provider(endpoint: str, headers: dict[str, str]) -> tuple[TracerProvider, list]:
    results: list = []

    class Recording(OTLPSpanExporter):
        def export(self, spans):
            results.append(super().export(spans))
            return results[-1]

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Recording(endpoint=endpoint, headers=headers)))
    return provider, results


def test_the_langfuse_sdk_unchanged(live_server, api_key):
    from langfuse import Langfuse, propagate_attributes

    client = Langfuse(
        public_key=api_key.partition(".")[0], secret_key=api_key, host=live_server.url, flush_at=1, flush_interval=0.1
    )
    for question, answer in zip(QUESTIONS, ANSWERS, strict=True):
        with (
            client.start_as_current_observation(as_type="agent", name="diagnose", input=question) as run,
            propagate_attributes(
                session_id="conv-langfuse",
                user_id="u-42",
                tags=["chat", "order-service"],
                trace_name="diagnose-chat",
                metadata={"tenant": "acme", "channel": "web"},
            ),
        ):
            with client.start_as_current_observation(
                as_type="generation",
                name="plan",
                model="qwen-max",
                input=[{"role": "user", "content": question}],
                usage_details={"input": 30, "output": 12},
            ) as generation:
                generation.update(output="调用知识库")
            with client.start_as_current_observation(
                as_type="tool", name="lookup_knowledge", input={"q": question}
            ) as tool:
                tool.update(output=RUNBOOK)
            run.update(output=answer)
    client.flush()
    client.shutdown()

    turns = assert_three_turns_of_one_conversation("conv-langfuse")
    plan = turns[0].steps.get(name="plan")
    assert (plan.detail["model"], plan.detail["inputTokens"], plan.detail["outputTokens"]) == ("qwen-max", 30, 12)
    assert plan.detail["user"] == "u-42"
    # The trace's tags, name and metadata, which the SDK writes on every span of the trace.
    assert (plan.detail["tags"], plan.detail["traceName"], plan.detail["metadata"]) == (
        ["chat", "order-service"],
        "diagnose-chat",
        {"tenant": "acme", "channel": "web"},
    )
    assert turns[0].invocations.get().tool_name == "lookup_knowledge"


def test_phoenix_otel_with_openinference_unchanged(live_server, api_key):
    from openinference.instrumentation import using_session, using_tags, using_user
    from phoenix.otel import register

    provider = register(
        endpoint=f"{live_server.url}/v1/traces",
        headers={"Authorization": f"Api-Key {api_key}"},
        protocol="http/protobuf",
        set_global_tracer_provider=False,
        verbose=False,
    )
    tracer = provider.get_tracer("diagnosis-agent")
    for question, answer in zip(QUESTIONS, ANSWERS, strict=True):
        with (
            using_session("conv-phoenix"),
            using_user("u-7"),
            using_tags(["chat", "phoenix"]),
            tracer.start_as_current_span("diagnose", openinference_span_kind="chain") as run,
        ):
            run.set_input(question)
            with tracer.start_as_current_span("lookup_knowledge", openinference_span_kind="tool") as tool:
                tool.set_tool(name="lookup_knowledge", parameters={"q": question})
                tool.set_output(RUNBOOK)
            run.set_output(answer)
    provider.force_flush()
    provider.shutdown()

    turns = assert_three_turns_of_one_conversation("conv-phoenix")
    assert [turn.invocations.get().tool_name for turn in turns] == ["lookup_knowledge"] * 3
    tool_step = turns[0].steps.get(name="lookup_knowledge")  # a tool under the root: a step of its own
    assert (tool_step.detail["user"], tool_step.detail["tags"]) == ("u-7", ["chat", "phoenix"])


def test_the_plain_opentelemetry_sdk_with_genai_conventions(live_server, api_key):
    provider, results = otlp_provider(f"{live_server.url}/v1/traces", {"Authorization": f"Api-Key {api_key}"})
    tracer = provider.get_tracer("diagnosis-agent")
    for question, answer in zip(QUESTIONS, ANSWERS, strict=True):
        with (
            tracer.start_as_current_span(
                "invoke_agent diagnoser",
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.conversation.id": "conv-otel",
                    "gen_ai.input.messages": json.dumps([{"role": "user", "content": question}], ensure_ascii=False),
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "content": answer}], ensure_ascii=False
                    ),
                },
            ),
            tracer.start_as_current_span(
                "chat qwen-max",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "qwen-max",
                    "gen_ai.usage.input_tokens": 40,
                    "gen_ai.usage.output_tokens": 9,
                },
            ),
        ):
            pass
    provider.shutdown()

    assert all(result.name == "SUCCESS" for result in results)
    turns = assert_three_turns_of_one_conversation("conv-otel")
    assert turns[1].steps.get().detail["inputTokens"] == 40


@pytest.mark.parametrize("mode", ["associations", "conversation"])
def test_openllmetry_traceloop_sdk_unchanged(live_server, api_key, fake_openai, mode):
    """traceloop-sdk in a process of its own (tests/otlp/traceloop_agent.py: `Traceloop.init` is once
    per process and instruments for good), its conversation named by its session-id association
    property or by its @conversation decorator."""
    fake_openai.replies = list(ANSWERS)
    env = {
        **os.environ,
        "SELFEVAL_URL": live_server.url,
        "SELFEVAL_API_KEY": api_key,
        "OPENAI_BASE_URL": fake_openai.url,
        "OPENAI_API_KEY": "sk-test",
        "CONVERSATION_MODE": mode,
        "TRACELOOP_TELEMETRY": "false",
        "TRACELOOP_METRICS_ENABLED": "false",  # SelfEval takes traces, not metrics (docs/otlp.md)
    }
    agent = subprocess.run(
        [sys.executable, "-m", "tests.otlp.traceloop_agent"],
        input="\n".join(QUESTIONS),
        capture_output=True,
        text=True,
        env=env,
        cwd=settings.BASE_DIR,
        timeout=120,
        check=False,
    )
    assert agent.returncode == 0, agent.stderr
    assert json.loads(agent.stdout.strip().splitlines()[-1]) == list(ANSWERS)
    turns = assert_three_turns_of_one_conversation("conv-traceloop")
    llm_step = turns[2].steps.get(name="openai.chat")
    assert (llm_step.detail["model"], llm_step.detail["totalTokens"], llm_step.detail["user"]) == (
        "gpt-4o-mini",
        29,
        "u-9",
    )
    assert [turn.invocations.get().tool_name for turn in turns] == ["lookup_knowledge"] * 3  # gen_ai.tool.name
    assert len(fake_openai.requests) == 3


def test_a_request_none_of_whose_spans_can_be_used_is_a_400_naming_what_is_missing(live_server, api_key):
    provider, results = otlp_provider(f"{live_server.url}/v1/traces", {"Authorization": f"Api-Key {api_key}"})
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("diagnose", attributes={"session.id": "conv-x"}):  # no input anywhere
        pass
    provider.shutdown()

    assert [result.name for result in results] == ["FAILURE"]  # the exporter logs it; it never retries a 400
    trace = BufferedTrace.objects.get()
    assert trace.rejected_spans == 1 and "input" in trace.error


def test_the_langfuse_path_takes_only_a_matching_public_and_secret_key(client, api_key, other_api_key):
    import base64

    def basic(public: str, secret: str) -> str:
        return "Basic " + base64.b64encode(f"{public}:{secret}".encode()).decode()

    url = "/api/public/otel/v1/traces"
    mismatched = basic(other_api_key.partition(".")[0], api_key)

    assert client.post(url, content_type="application/x-protobuf").status_code == 401
    assert client.post(url, content_type="application/x-protobuf", HTTP_AUTHORIZATION=mismatched).status_code == 401
    valid = basic(api_key.partition(".")[0], api_key)
    accepted = client.post(url, content_type="application/x-protobuf", HTTP_AUTHORIZATION=valid)
    assert accepted.status_code != 401, accepted.content  # authenticated (an empty body is a 400 of its own)
