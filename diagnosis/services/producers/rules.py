"""Rule evaluation (`rule_evaluation`): how much evidence the agent collected. No LLM.

The seed's table, exactly:

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

from .types import SessionData


def rule_evaluation(*, session: SessionData) -> RuleEvaluation:
    invocations = session.invocations
    factors: list[RuleFactor] = []
    partial = session.status == "RUNNING"

    def layer(score: int) -> RuleEvaluation:
        return RuleEvaluation(evidence_score=max(0, min(100, score)), source="rule", factors=factors, partial=partial)

    if session.status == "FAILED":
        factors.append(RuleFactor(rule="execution_failed", delta=0, sets_score=0, detail="session status is FAILED"))
        return layer(0)
    if not invocations:
        factors.append(RuleFactor(rule="no_tool_call", delta=0, sets_score=0, detail="no tool was called"))
        return layer(0)

    succeeded = [inv for inv in invocations if inv.status == "SUCCESS"]
    retrieval = [inv for inv in invocations if inv.is_retrieval]
    l0 = [inv.invocation_id for inv in succeeded if inv.match_level == "L0"]
    l1 = [inv.invocation_id for inv in succeeded if inv.match_level == "L1"]
    score = 0
    if succeeded:
        score += 30
        factors.append(
            RuleFactor(
                rule="has_successful_tool_call", delta=30, detail=f"{len(succeeded)}/{len(invocations)} calls succeeded"
            )
        )
    if l0:
        score += 35
        factors.append(RuleFactor(rule="l0_exact_match", delta=35, detail="L0 exact hit", invocations=l0))
    elif l1:
        score += 20
        factors.append(RuleFactor(rule="l1_semantic_match", delta=20, detail="L1 semantic hit, no L0", invocations=l1))
    if retrieval and not l0 and not l1:
        score -= 10
        factors.append(
            RuleFactor(rule="retrieval_no_hit", delta=-10, detail=f"{len(retrieval)} retrieval calls, no L0/L1 hit")
        )
    if not succeeded:
        score -= 20
        factors.append(
            RuleFactor(rule="all_tool_calls_failed", delta=-20, detail=f"all {len(invocations)} calls failed")
        )
    return layer(score)
