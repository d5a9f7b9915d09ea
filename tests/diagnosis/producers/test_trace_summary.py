"""Tool trace summary: one navigation entry per call, in call order, with the claims citing it."""

from .builders import claim, evaluate, executor, inv, layer_of, retrieval, session

KB = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。"


def test_one_entry_per_call_in_call_order_with_the_claims_that_cite_it():
    invocations = [
        retrieval("inv-1", KB, latency_ms=42, step_index=1),
        inv("inv-2", tool="query_metrics", status="FAILED", latency_ms=None, step_index=2),
        retrieval("inv-3", "nothing relevant", level="NONE", tool="query_logs", step_index=3),
    ]
    claims = executor(
        claim("c1", "order-service 的数据库连接池耗尽", ("inv-1#1", "连接池耗尽")),
        claim("c2", "请求排队超时", ("inv-1#1", "请求排队超时"), ("inv-2", "anything")),
    )

    summary = layer_of(evaluate(session(invocations=invocations, executor_output=claims)), "verifier_evaluation")[
        "tool_trace_summary"
    ]

    assert summary == [
        {
            "invocationId": "inv-1",
            "tool": "lookup_knowledge",
            "status": "SUCCESS",
            "matchLevel": "L0",
            "refIds": ["inv-1#1"],
            "latencyMs": 42,
            "stepIndex": 1,
            "citedBy": ["c1", "c2"],
        },
        {
            "invocationId": "inv-2",
            "tool": "query_metrics",
            "status": "FAILED",
            "matchLevel": None,  # not a retrieval call
            "refIds": [],
            "latencyMs": None,
            "stepIndex": 2,
            "citedBy": ["c2"],  # cited by its invocation id
        },
        {
            "invocationId": "inv-3",
            "tool": "query_logs",
            "status": "SUCCESS",
            "matchLevel": "NONE",
            "refIds": ["inv-3#1"],
            "latencyMs": 100,
            "stepIndex": 3,
            "citedBy": [],
        },
    ]


def test_no_calls_give_an_empty_summary():
    layer = layer_of(evaluate(session(executor_output=executor())), "verifier_evaluation")

    assert layer["tool_trace_summary"] == []
