"""Rule evaluation (`rule_evaluation`): how much evidence the agent collected. No LLM.

Seed document 000's table, exactly:

| rule                     | condition                                  | change  |
|--------------------------|--------------------------------------------|---------|
| execution_failed         | session status FAILED                      | score 0 |
| no_tool_call             | no tool invocation                         | score 0 |
| has_successful_tool_call | at least one SUCCESS call                  | +30     |
| l0_exact_match           | any successful invocation with an L0 hit   | +35     |
| l1_semantic_match        | an L1 hit and no L0 hit (exclusive)        | +20     |
| retrieval_no_hit         | retrieval calls exist, none hit (L0/L1)    | -10     |
| all_tool_calls_failed    | every call FAILED                          | -20     |

A hit counts only on a SUCCESS call: a FAILED call that reports matchLevel L0 or L1 hit
nothing (the gatekeeper refuses its refs as REF_FROM_FAILED_CALL too), so it earns no bonus and,
if no other call hit, the retrieval_no_hit penalty. The score is clamped to [0, 100]; execution_failed and no_tool_call end the evaluation (their
factor has delta 0 and `sets_score: 0`). A RUNNING session is scored on the calls recorded so far
and marked `partial: true`; the next ingestion of the same session replaces it.
"""

from diagnosis.evaluation_layers import RuleEvaluation, RuleFactor
from diagnosis.messages import message

from .types import SessionData


def _factor(rule: str, delta: int, *, invocations: list[str] | None = None, **params: int) -> RuleFactor:
    """The factor of `rule`; its detail is the rule's message (`rule.<rule>`) with `params`."""
    extra = {} if invocations is None else {"invocations": invocations}
    if delta == 0:
        extra["sets_score"] = 0
    return RuleFactor(rule=rule, delta=delta, **message(f"rule.{rule}", **params).fields("detail"), **extra)


def rule_evaluation(*, session: SessionData) -> RuleEvaluation:
    invocations = session.invocations
    factors: list[RuleFactor] = []
    partial = session.status == "RUNNING"

    def layer(score: int) -> RuleEvaluation:
        return RuleEvaluation(evidence_score=max(0, min(100, score)), source="rule", factors=factors, partial=partial)

    if session.status == "FAILED":
        factors.append(_factor("execution_failed", 0))
        return layer(0)
    if not invocations:
        factors.append(_factor("no_tool_call", 0))
        return layer(0)

    succeeded = [inv for inv in invocations if inv.status == "SUCCESS"]
    retrieval = [inv for inv in invocations if inv.is_retrieval]
    l0 = [inv.invocation_id for inv in succeeded if inv.match_level == "L0"]
    l1 = [inv.invocation_id for inv in succeeded if inv.match_level == "L1"]
    score = 0
    if succeeded:
        score += 30
        factors.append(_factor("has_successful_tool_call", 30, succeeded=len(succeeded), total=len(invocations)))
    if l0:
        score += 35
        factors.append(_factor("l0_exact_match", 35, invocations=l0))
    elif l1:
        score += 20
        factors.append(_factor("l1_semantic_match", 20, invocations=l1))
    if retrieval and not l0 and not l1:
        score -= 10
        factors.append(_factor("retrieval_no_hit", -10, count=len(retrieval)))
    if not succeeded:
        score -= 20
        factors.append(_factor("all_tool_calls_failed", -20, count=len(invocations)))
    return layer(score)
