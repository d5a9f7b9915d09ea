"""Clients nobody here wrote, unchanged, against a live server: the Langfuse SDK, Phoenix's
`phoenix.otel` with OpenInference, the plain OpenTelemetry SDK and OpenLLMetry's conventions each
send a three-turn conversation. Each turn (a trace) becomes one session, the SDK's session id groups
them into one conversation, and nothing is refused: no span counted as rejected anywhere.

OpenLLMetry: traceloop-sdk pulls some thirty instrumentation packages, one of which (its threading
instrumentation) needs an older opentelemetry-api than this project's opentelemetry-sdk (the conflict
is spelled out in requirements-dev.txt), so the LLM call goes through the OpenAI SDK instrumented by
OpenLLMetry's own OpenAI instrumentation (against a local fake OpenAI server), its decorators' spans
are written with the attribute names of its conventions package (opentelemetry-semantic-conventions-ai),
its association properties set as its span processor sets them, and all of it is sent by the
OpenTelemetry SDK's OTLP/HTTP exporter.
"""

import json

import pytest
from openai import OpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.semconv_ai import SpanAttributes, TraceloopSpanKindValues

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


class AssociationProperties(SpanProcessor):
    """What traceloop-sdk's span processor does with `Traceloop.set_association_properties`: the
    conversation's properties on every span started, the instrumentations' spans included."""

    def __init__(self, properties: dict[str, str]) -> None:
        self.properties = properties

    def on_start(self, span, parent_context=None) -> None:
        for name, value in self.properties.items():
            span.set_attribute(f"{SpanAttributes.TRACELOOP_ASSOCIATION_PROPERTIES}.{name}", value)


def openllmetry_turn(tracer, llm: OpenAI, question: str) -> str:
    """One workflow as OpenLLMetry records it: the @workflow decorator's span, an @tool span, and the
    LLM call through the OpenAI SDK, recorded by OpenLLMetry's own OpenAI instrumentation."""
    with tracer.start_as_current_span(
        "diagnose.workflow",
        attributes={
            SpanAttributes.TRACELOOP_SPAN_KIND: TraceloopSpanKindValues.WORKFLOW.value,
            SpanAttributes.TRACELOOP_ENTITY_NAME: "diagnose",
            SpanAttributes.TRACELOOP_ENTITY_INPUT: json.dumps({"args": [question], "kwargs": {}}, ensure_ascii=False),
        },
    ) as workflow:
        with tracer.start_as_current_span(
            "lookup_knowledge.tool",
            attributes={
                SpanAttributes.TRACELOOP_SPAN_KIND: TraceloopSpanKindValues.TOOL.value,
                SpanAttributes.TRACELOOP_ENTITY_NAME: "lookup_knowledge",
                SpanAttributes.TRACELOOP_ENTITY_INPUT: json.dumps({"args": [], "kwargs": {"q": question}}),
                SpanAttributes.TRACELOOP_ENTITY_OUTPUT: json.dumps(RUNBOOK, ensure_ascii=False),
            },
        ):
            pass
        completion = llm.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"{RUNBOOK}\n{question}"}]
        )
        answer = completion.choices[0].message.content
        workflow.set_attribute(SpanAttributes.TRACELOOP_ENTITY_OUTPUT, json.dumps(answer, ensure_ascii=False))
    return answer


def test_openllmetry_with_its_openai_instrumentation(live_server, api_key, fake_openai):
    provider, results = otlp_provider(f"{live_server.url}/v1/traces", {"Authorization": f"Api-Key {api_key}"})
    provider.add_span_processor(AssociationProperties({"session_id": "conv-openllmetry", "user_id": "u-9"}))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        llm = OpenAI(base_url=fake_openai.url, api_key="sk-test", max_retries=0)
        tracer = provider.get_tracer("traceloop.tracer")
        for question, answer in zip(QUESTIONS, ANSWERS, strict=True):
            fake_openai.reply = answer
            assert openllmetry_turn(tracer, llm, question) == answer
    finally:
        instrumentor.uninstrument()
        provider.shutdown()

    assert all(result.name == "SUCCESS" for result in results)
    turns = assert_three_turns_of_one_conversation("conv-openllmetry")
    llm_step = turns[2].steps.get(name="openai.chat")
    assert (llm_step.detail["model"], llm_step.detail["totalTokens"], llm_step.detail["user"]) == (
        "gpt-4o-mini",
        29,
        "u-9",
    )
    assert turns[2].invocations.get().tool_name == "lookup_knowledge.tool"
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
