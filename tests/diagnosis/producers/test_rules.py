"""Rule evaluation: seed document 000's score table, row by row and in the combinations that matter."""

import pytest

from diagnosis.evaluation_layers import layer_json
from diagnosis.services.producers.rules import rule_evaluation

from .builders import inv, retrieval, session


def rule_layer(data) -> dict:
    """The rule layer as stored."""
    return layer_json(rule_evaluation(session=data))


OK_PLAIN = inv("p1", tool="query_metrics")
FAILED_PLAIN = inv("p2", tool="query_metrics", status="FAILED")
L0 = retrieval("r0", "chunk", level="L0")
L1 = retrieval("r1", "chunk", level="L1")
MISS = retrieval("r2", "chunk", level="NONE")
MISS_FAILED = retrieval("r3", "chunk", level="NONE", status="FAILED")
L0_FAILED = retrieval("r4", "chunk", level="L0", status="FAILED")
L1_FAILED = retrieval("r5", "chunk", level="L1", status="FAILED")


@pytest.mark.parametrize(
    ("status", "invocations", "score", "rules"),
    [
        # One row of the table each.
        ("FAILED", [OK_PLAIN, L0], 0, ["execution_failed"]),
        ("SUCCEEDED", [], 0, ["no_tool_call"]),
        ("SUCCEEDED", [OK_PLAIN], 30, ["has_successful_tool_call"]),
        ("SUCCEEDED", [OK_PLAIN, L0], 65, ["has_successful_tool_call", "l0_exact_match"]),
        ("SUCCEEDED", [L1], 50, ["has_successful_tool_call", "l1_semantic_match"]),
        ("SUCCEEDED", [MISS], 20, ["has_successful_tool_call", "retrieval_no_hit"]),
        ("SUCCEEDED", [FAILED_PLAIN], 0, ["all_tool_calls_failed"]),
        # Combinations: L0 wins over L1 (exclusive), a hit anywhere cancels retrieval_no_hit,
        # all failed with a retrieval miss stacks both penalties and clamps at 0.
        ("SUCCEEDED", [L0, L1], 65, ["has_successful_tool_call", "l0_exact_match"]),
        ("SUCCEEDED", [L1, MISS], 50, ["has_successful_tool_call", "l1_semantic_match"]),
        ("SUCCEEDED", [FAILED_PLAIN, MISS_FAILED], 0, ["retrieval_no_hit", "all_tool_calls_failed"]),
        ("SUCCEEDED", [OK_PLAIN, FAILED_PLAIN, MISS], 20, ["has_successful_tool_call", "retrieval_no_hit"]),
        # Only a successful call's hit counts: a FAILED call reporting L0 or L1 hit nothing.
        ("SUCCEEDED", [L0_FAILED], 0, ["retrieval_no_hit", "all_tool_calls_failed"]),
        ("SUCCEEDED", [OK_PLAIN, L0_FAILED], 20, ["has_successful_tool_call", "retrieval_no_hit"]),
        ("SUCCEEDED", [L1, L0_FAILED], 50, ["has_successful_tool_call", "l1_semantic_match"]),
        ("SUCCEEDED", [MISS, L1_FAILED], 20, ["has_successful_tool_call", "retrieval_no_hit"]),
        ("FAILED", [], 0, ["execution_failed"]),
        # RUNNING sessions are scored on the calls so far.
        ("RUNNING", [OK_PLAIN, L1], 50, ["has_successful_tool_call", "l1_semantic_match"]),
    ],
)
def test_rule_table(status, invocations, score, rules):
    layer = rule_layer(session(status=status, invocations=invocations))

    assert layer["evidence_score"] == score
    assert layer["source"] == "rule"
    assert [f["rule"] for f in layer["factors"]] == rules


def test_factor_deltas_sum_to_the_unclamped_score():
    layer = rule_layer(session(invocations=[OK_PLAIN, L0]))

    assert {f["rule"]: f["delta"] for f in layer["factors"]} == {"has_successful_tool_call": 30, "l0_exact_match": 35}
    assert all(f["detail"] for f in layer["factors"])


def test_running_session_is_marked_partial_and_finished_is_not():
    assert rule_layer(session(status="RUNNING", invocations=[OK_PLAIN]))["partial"] is True
    assert rule_layer(session(status="SUCCEEDED", invocations=[OK_PLAIN]))["partial"] is False


def test_terminal_rules_set_the_score_to_zero():
    factor = rule_layer(session(status="FAILED", invocations=[L0]))["factors"][0]

    assert factor == {
        "rule": "execution_failed",
        "delta": 0,
        "sets_score": 0,
        "detail": "session status is FAILED",
        "detail_code": "rule.execution_failed",
        "detail_params": {},
    }
