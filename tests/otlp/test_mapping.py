"""Spans -> session payload, for both conventions, from spans the real SDK recorded (no database)."""

import json

import pytest

from otlp.services.mapping import MatchThresholds, session_payload_from_spans
from otlp.spans import IncomingSpan, SpanRefused, spans_from_request
from tests.otlp.sdk import (
    ANSWER,
    EXECUTOR_OUTPUT,
    LOGS,
    LOGS_ID,
    QUERY,
    RUNBOOK,
    RUNBOOK_ID,
    Recorder,
    genai_agent,
    openinference_agent,
    request_of,
    trace_hex,
)

THRESHOLDS = MatchThresholds(l0=0.9, l1=0.5)


def mapped(spans, thresholds: MatchThresholds = THRESHOLDS):
    items = list(spans_from_request(request_of(spans), max_attribute_bytes=1_000_000))
    assert all(isinstance(item, IncomingSpan) for item in items), items
    return session_payload_from_spans(
        trace_id=items[0].trace_id, spans=[item.record for item in items], thresholds=thresholds
    )


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def test_openinference_trace(recorder):
    openinference_agent(recorder.tracer, session_id="s-oi-1")
    spans = recorder.take()
    root = next(span for span in spans if span.parent is None)

    result = mapped(spans)

    payload = result.payload
    assert result.root_span_id == format(root.context.span_id, "016x")
    assert (payload["sessionId"], payload["mode"], payload["status"]) == ("s-oi-1", "chat", "SUCCEEDED")
    assert payload["query"] == QUERY  # from the JSON input.value {"question": ...}
    assert payload["answer"] == ANSWER
    assert payload["executorOutput"] == EXECUTOR_OUTPUT
    assert payload["createdAt"].endswith("Z") and payload["finishedAt"] >= payload["createdAt"]
    # Tools and retrievers directly under the root are steps of their own.
    assert [(s["index"], s["name"], s["detail"]["kind"], s["detail"].get("model")) for s in payload["steps"]] == [
        (0, "plan", "LLM", "qwen-max"),
        (1, "lookup_knowledge", "TOOL", None),
        (2, "search_logs", "RETRIEVER", None),
        (3, "query_metrics", "TOOL", None),
    ]
    lookup, logs, metrics = payload["toolInvocations"]
    assert [lookup["stepIndex"], logs["stepIndex"], metrics["stepIndex"]] == [1, 2, 3]
    assert lookup["toolName"] == "lookup_knowledge" and lookup["arguments"] == {"q": "order-service 5xx"}
    assert lookup["output"] == "1 chunk"
    # The retriever under the tool span gives that tool its retrieval details.
    assert lookup["retrievalDetails"] == {
        "matchLevel": "L0",
        "evidenceRefs": [{"refId": RUNBOOK_ID, "source": "kb://runbooks/order-5xx.md", "content": RUNBOOK}],
    }
    # A retriever without a tool ancestor is an invocation of its own; its output is its documents.
    assert logs["toolName"] == "search_logs" and logs["arguments"] == {"query": "order-service errors"}
    assert logs["retrievalDetails"]["matchLevel"] == "L1"  # score 0.62: between the thresholds
    assert logs["retrievalDetails"]["evidenceRefs"] == [{"refId": LOGS_ID, "source": "", "content": LOGS}]
    assert logs["output"] == [{"id": LOGS_ID, "score": 0.62}]
    # Errors from the exception event; latency from the span.
    assert (metrics["status"], metrics["error"], metrics.get("retrievalDetails")) == (
        "FAILED",
        "TimeoutError: prometheus timeout",
        None,
    )
    assert all(isinstance(inv["latencyMs"], int) for inv in payload["toolInvocations"])
    tool_span = next(span for span in spans if span.name == "lookup_knowledge")
    assert lookup["invocationId"] == format(tool_span.context.span_id, "016x")  # no gen_ai.tool.call.id


def test_genai_trace(recorder):
    genai_agent(recorder.tracer)
    spans = recorder.take()

    payload = mapped(spans).payload

    assert payload["sessionId"] == trace_hex(spans)  # no session.id: the trace id
    assert (payload["query"], payload["answer"]) == (QUERY, ANSWER)  # gen_ai.input/output.messages
    assert [(s["name"], s["detail"]["kind"], s["detail"].get("model")) for s in payload["steps"]] == [
        ("chat qwen-max", "chat", "qwen-max"),
        ("execute_tool lookup_knowledge", "execute_tool", None),
        ("execute_tool query_metrics", "execute_tool", None),
    ]
    lookup, metrics = payload["toolInvocations"]
    assert (lookup["invocationId"], lookup["toolName"], lookup["arguments"], lookup["output"]) == (
        "call-1",
        "lookup_knowledge",
        {"q": "order-service 5xx"},
        "1 chunk",
    )
    assert lookup["retrievalDetails"] == {
        "matchLevel": "L0",
        "evidenceRefs": [{"refId": RUNBOOK_ID, "source": "", "content": RUNBOOK}],
    }
    assert (metrics["invocationId"], metrics["status"], metrics["arguments"]) == ("call-2", "FAILED", {})


def test_invocations_belong_to_their_nearest_step(recorder):
    tracer = recorder.tracer
    with tracer.start_as_current_span("run", attributes={"input.value": "why?"}):
        with (
            tracer.start_as_current_span("collect", attributes={"openinference.span.kind": "AGENT"}),
            tracer.start_as_current_span("query_logs", attributes={"openinference.span.kind": "TOOL"}),
        ):
            pass
        with tracer.start_as_current_span("answer", attributes={"openinference.span.kind": "LLM"}):
            pass
        with tracer.start_as_current_span("query_metrics", attributes={"gen_ai.operation.name": "execute_tool"}):
            pass

    payload = mapped(recorder.take()).payload

    assert [s["name"] for s in payload["steps"]] == ["collect", "answer", "query_metrics"]
    assert [(i["toolName"], i["stepIndex"]) for i in payload["toolInvocations"]] == [
        ("query_logs", 0),
        ("query_metrics", 2),  # directly under the root: a step of its own
    ]


def retrieval(recorder, **attributes):
    with (
        recorder.tracer.start_as_current_span("run", attributes={"input.value": "q"}),
        recorder.tracer.start_as_current_span(
            "search", attributes={"openinference.span.kind": "RETRIEVER", **attributes}
        ),
    ):
        pass
    return mapped(recorder.take()).payload["toolInvocations"][0]["retrievalDetails"]


@pytest.mark.parametrize(
    ("attributes", "level"),
    [
        ({"retrieval.documents.0.document.score": 0.9}, "L0"),  # thresholds are inclusive
        ({"retrieval.documents.0.document.score": 0.89}, "L1"),
        ({"retrieval.documents.0.document.score": 0.5}, "L1"),
        ({"retrieval.documents.0.document.score": 0.49}, "NONE"),
        ({"retrieval.documents.0.document.score": 0.2, "retrieval.documents.1.document.score": 0.95}, "L0"),
        ({"retrieval.documents.0.document.content": "no score"}, "L1"),  # a hit of unknown strength
        ({}, "NONE"),  # nothing retrieved
        ({"retrieval.documents.0.document.score": 0.99, "selfeval.match_level": "l1"}, "L1"),  # declared wins
        ({"selfeval.match_level": "NONE"}, "NONE"),
    ],
)
def test_match_level(recorder, attributes, level):
    assert retrieval(recorder, **attributes)["matchLevel"] == level


def test_unknown_declared_match_level_goes_to_the_serializer_as_it_is(recorder):
    assert retrieval(recorder, **{"selfeval.match_level": "L2"})["matchLevel"] == "L2"


def test_documents_without_ids_and_repeated_ids_get_unique_ref_ids(recorder):
    tracer = recorder.tracer
    with tracer.start_as_current_span("run", attributes={"input.value": "q"}):
        for name in ("first", "second"):
            with tracer.start_as_current_span(
                name,
                attributes={
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.id": "doc-1",
                    "retrieval.documents.0.document.content": f"{name} copy",
                    "retrieval.documents.1.document.content": "anonymous",
                },
            ):
                pass

    first, second = mapped(recorder.take()).payload["toolInvocations"]

    ids = [[ref["refId"] for ref in invocation["retrievalDetails"]["evidenceRefs"]] for invocation in (first, second)]
    assert ids == [
        ["doc-1", f"{first['invocationId']}#2"],
        [f"doc-1@{second['invocationId']}", f"{second['invocationId']}#2"],
    ]


def test_root_error_fails_the_session(recorder):
    from opentelemetry.trace import Status, StatusCode

    with recorder.tracer.start_as_current_span("run", attributes={"input.value": "q"}) as root:
        root.set_status(Status(StatusCode.ERROR, "agent crashed"))

    assert mapped(recorder.take()).payload["status"] == "FAILED"


def test_without_a_root_the_session_is_running_and_takes_the_first_input(recorder):
    with recorder.tracer.start_as_current_span("run"):
        with recorder.tracer.start_as_current_span(
            "chat",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "system", "content": "be brief"}, {"role": "user", "content": "why 5xx?"}]
                ),
            },
        ):
            pass
        with recorder.tracer.start_as_current_span(
            "chat again",
            attributes={"gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "the pool"}])},
        ):
            pass
    spans = [span for span in recorder.take() if span.parent is not None]

    result = mapped(spans)

    assert result.root_span_id == ""
    payload = result.payload
    assert (payload["status"], payload["finishedAt"]) == ("RUNNING", None)
    assert (payload["query"], payload["answer"]) == ("why 5xx?", "the pool")
    assert payload["createdAt"] == payload["steps"][0]["detail"]["startedAt"]


def test_a_span_whose_parent_is_in_another_process_is_the_root(recorder):
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

    remote = SpanContext(trace_id=0xABC, span_id=0xDEF, is_remote=True, trace_flags=TraceFlags(1))
    with (
        recorder.tracer.start_as_current_span(
            "POST /diagnose", context=set_span_in_context(NonRecordingSpan(remote)), attributes={"input.value": "q"}
        ) as server,
        recorder.tracer.start_as_current_span("step"),
    ):
        pass
    spans = recorder.take()

    result = mapped(spans)

    assert result.root_span_id == format(server.get_span_context().span_id, "016x")
    assert result.payload["status"] == "SUCCEEDED" and [s["name"] for s in result.payload["steps"]] == ["step"]


def test_older_genai_instrumentations_put_prompt_and_completion_in_events(recorder):
    with recorder.tracer.start_as_current_span("openai.chat", attributes={"gen_ai.system": "openai"}) as span:
        span.add_event("gen_ai.content.prompt", {"gen_ai.prompt": "why 5xx?"})
        span.add_event("gen_ai.content.completion", {"gen_ai.completion": "the pool"})

    payload = mapped(recorder.take()).payload

    assert (payload["query"], payload["answer"]) == ("why 5xx?", "the pool")


def test_older_openllmetry_releases_index_prompts_completions_and_usage(recorder):
    """OpenLLMetry's OpenAI instrumentation before the GenAI message attributes (its semconv-ai names)."""
    with recorder.tracer.start_as_current_span(
        "openai.chat",
        attributes={
            "llm.request.type": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "be brief",
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "why 5xx?",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "the pool",
            "llm.usage.total_tokens": 29,
            "traceloop.association.properties.session_id": "conv-1",
            "traceloop.association.properties.user_id": "u-9",
        },
    ):
        pass

    payload = mapped(recorder.take()).payload

    assert (payload["query"], payload["answer"], payload["conversationId"]) == ("why 5xx?", "the pool", "conv-1")


def test_openinference_llm_messages_and_plain_text_input(recorder):
    with recorder.tracer.start_as_current_span(
        "llm",
        attributes={
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "be brief",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "why 5xx?",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "the pool",
        },
    ):
        pass

    payload = mapped(recorder.take()).payload

    assert (payload["query"], payload["answer"]) == ("why 5xx?", "the pool")


def test_tool_arguments_that_are_not_an_object_are_wrapped(recorder):
    with (
        recorder.tracer.start_as_current_span("run", attributes={"input.value": "q"}),
        recorder.tracer.start_as_current_span(
            "grep", attributes={"openinference.span.kind": "TOOL", "input.value": "ERROR order-service"}
        ),
    ):
        pass

    assert mapped(recorder.take()).payload["toolInvocations"][0]["arguments"] == {"input": "ERROR order-service"}


def test_resource_selfeval_attributes_are_defaults_the_span_can_override():
    recorder = Recorder(resource={"service.name": "agent", "selfeval.mode": "aiops"})
    with recorder.tracer.start_as_current_span("run", attributes={"input.value": "q"}):
        pass
    assert mapped(recorder.take()).payload["mode"] == "aiops"

    with recorder.tracer.start_as_current_span("run", attributes={"input.value": "q", "selfeval.mode": "chat"}):
        pass
    assert mapped(recorder.take()).payload["mode"] == "chat"


def test_spans_with_a_nul_character_are_refused(recorder):
    with recorder.tracer.start_as_current_span("run", attributes={"input.value": "a\x00b"}):
        pass

    (item,) = spans_from_request(request_of(recorder.take()), max_attribute_bytes=1000)

    assert isinstance(item, SpanRefused) and "NUL" in str(item)


def test_langfuse_v3_trace_attributes(recorder):
    """What Langfuse's v3 SDK writes: update_current_trace(input=, output=, tags=, metadata=, user_id=,
    session_id=) from inside a generation lands the trace's attributes on that span, as JSON strings."""
    tracer = recorder.tracer
    with tracer.start_as_current_span("agent-run", attributes={"langfuse.observation.type": "span"}):
        with tracer.start_as_current_span(
            "plan",
            attributes={
                "langfuse.observation.type": "generation",
                "langfuse.observation.input": json.dumps([{"role": "user", "content": "system prompt + " + QUERY}]),
                "langfuse.observation.output": json.dumps("调用知识库", ensure_ascii=False),
                "langfuse.trace.input": json.dumps({"question": QUERY}, ensure_ascii=False),
                "langfuse.trace.output": json.dumps(ANSWER, ensure_ascii=False),
                "langfuse.trace.name": "diagnose-chat",
                "langfuse.trace.tags": json.dumps(["chat", "order-service"]),
                "langfuse.trace.metadata": json.dumps({"tenant": "acme"}),
                "langfuse.trace.metadata.channel": json.dumps("web"),
                "langfuse.user.id": "u-42",
                "langfuse.session.id": "conv-v3",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "summarise",
            attributes={
                "langfuse.observation.type": "generation",
                "langfuse.observation.output": json.dumps("最后一次调用的输出", ensure_ascii=False),
            },
        ):
            pass

    payload = mapped(recorder.take()).payload

    # The root has no input or output of its own: the trace's, not the first or last generation's.
    assert (payload["query"], payload["answer"]) == (QUERY, ANSWER)
    assert payload["conversationId"] == "conv-v3"
    plan = payload["steps"][0]["detail"]
    assert (plan["user"], plan["tags"], plan["traceName"], plan["metadata"]) == (
        "u-42",
        ["chat", "order-service"],
        "diagnose-chat",
        {"tenant": "acme", "channel": "web"},
    )
    assert not {"tags", "traceName", "metadata"} & set(payload["steps"][1]["detail"])  # none on that span


def test_the_roots_own_input_and_output_come_before_the_traces(recorder):
    with recorder.tracer.start_as_current_span(
        "run",
        attributes={
            "input.value": QUERY,
            "output.value": ANSWER,
            "langfuse.trace.input": "another input",
            "langfuse.trace.output": "another output",
        },
    ):
        pass

    payload = mapped(recorder.take()).payload

    assert (payload["query"], payload["answer"]) == (QUERY, ANSWER)
