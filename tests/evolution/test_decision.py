"""Seed document 004's decision rules, confidence formula and thresholds, on the pure `evolution_decide`."""

import dataclasses

import pytest

from evolution.services.competitors import CompetitorAnswer
from evolution.services.decision import evolution_decide
from evolution.services.text import char_length
from evolution.services.types import Thresholds, UserFeedback
from tests.evolution.samples import (
    COMPETITOR_ANSWER,
    NEW_STUDY_ANSWER,
    OLD_STUDY_ANSWER,
    ONE_LINE_ANSWER,
    PLAIN_LONG_ANSWER,
    STUDY_QUERY,
)

DEFAULTS = Thresholds()
WEAK = CompetitorAnswer(name="weak", ok=True, content=ONE_LINE_ANSWER)
MIDDLING = CompetitorAnswer(name="middling", ok=True, content=COMPETITOR_ANSWER)
STRONG = CompetitorAnswer(name="strong", ok=True, content=NEW_STUDY_ANSWER + "\n\n```\nfocus = 25\n```\n")
TIMED_OUT = CompetitorAnswer(name="slow", ok=False, error="timeout after 15 s")


def verify(new=NEW_STUDY_ANSWER, old=OLD_STUDY_ANSWER, thresholds=DEFAULTS, **kwargs):
    return evolution_decide(query=STUDY_QUERY, old_response=old, new_response=new, thresholds=thresholds, **kwargs)


def with_thresholds(**changes) -> Thresholds:
    return dataclasses.replace(DEFAULTS, **changes)


def test_default_thresholds_are_seed_document_004_s_table():
    assert DEFAULTS.to_dict() == {
        "min_confidence": 0.7,
        "min_improvement_ratio": 1.2,
        "min_length": 500,
        "min_user_satisfaction": 4.0,
        "max_competitor_rank": 2,
        "min_structure_score": 0.6,
    }


def test_seed_document_004_basic_metrics_example():
    """Seed document 004: old 150, new 600 characters -> improved, ratio 4.0, meets the 500 minimum."""
    basic = verify(old="旧" * 150, new="新" * 600).metrics["basic"]

    assert {key: basic[key] for key in ("old_length", "new_length", "length_improved", "length_ratio")} == {
        "old_length": 150,
        "new_length": 600,
        "length_improved": True,
        "length_ratio": 4.0,
    }
    assert basic["meets_min_length"] is True


def test_seed_document_004_example_structured_study_tips_answer_passes():
    result = verify()

    assert result.is_valid
    # must pass 0.3 + structure 0.1 + length 0.2 + quality 0.2; no competitors, no feedback
    assert result.confidence == 0.8
    assert result.metrics["basic"]["new_length"] >= 500
    assert result.metrics["structure"]["structure_score"] == 0.75
    assert result.metrics["quality"]["improvement"]["overall_improved"]
    assert result.suggestions == []
    assert result.reasons[0].startswith("basic.new_length: 新回答")


def test_seed_document_004_example_one_line_answer_fails_with_reasons_and_suggestions():
    result = verify(new=ONE_LINE_ANSWER, lang="en")

    assert not result.is_valid
    assert result.confidence == 0.0
    assert result.metrics["decision"]["failed_must_pass"] == ["basic.meets_min_length", "structure.meets_threshold"]
    metrics_named = {reason.split(":")[0] for reason in result.reasons}
    assert {"basic.new_length", "structure.structure_score", "decision.improvements"} <= metrics_named
    suggestion_metrics = {suggestion.split(":")[0] for suggestion in result.suggestions}
    assert {"basic.new_length", "structure.has_headings", "structure.has_lists", "quality.keywords.missing"} <= (
        suggestion_metrics
    )
    assert "expand the answer to at least 500 characters (494 more)" in result.suggestions[0]


def test_reasons_and_suggestions_in_both_languages():
    chinese = verify(new=ONE_LINE_ANSWER, lang="zh")
    english = verify(new=ONE_LINE_ANSWER, lang="en")

    assert chinese.reasons[0] == "basic.new_length: 新回答仅 6 字，低于最小长度 500 字（必须通过项）"
    assert (
        english.reasons[0]
        == "basic.new_length: the new answer has only 6 characters, below the minimum of 500 (must pass)"
    )
    assert len(chinese.suggestions) == len(english.suggestions)


def test_each_dimension_keeps_its_own_metrics_and_nothing_is_flattened():
    result = verify()

    assert set(result.metrics) == {"basic", "structure", "quality", "competitors", "user_feedback", "decision"}
    assert "meets_threshold" not in result.metrics
    assert "structure_score" not in result.metrics
    assert result.to_dict().keys() == {"is_valid", "confidence", "reasons", "suggestions", "metrics"}


def _resolve(metrics: dict, path: str):
    value = metrics
    for part in path.split("."):
        value = value[part]
    return value


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"new": ONE_LINE_ANSWER, "user_feedback": UserFeedback(2.0, "太短")},
        {"new": PLAIN_LONG_ANSWER, "competitor_answers": [STRONG, MIDDLING]},
        {"competitor_answers": [WEAK, TIMED_OUT], "user_feedback": UserFeedback(4.5)},
        {"old": NEW_STUDY_ANSWER, "thresholds": with_thresholds(max_competitor_rank=1), "competitor_answers": [STRONG]},
    ],
)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_reason_suggestion_and_decision_item_names_a_metric_that_exists(kwargs, lang):
    """ "Names the metric behind it" is checkable: each prefix is a path into `metrics`."""
    result = verify(lang=lang, **kwargs)
    decision = result.metrics["decision"]

    named = [text.split(": ", 1)[0] for text in result.reasons + result.suggestions]
    named += [*decision["must_pass"], *decision["improvements"]]
    for path in named:
        _resolve(result.metrics, path)  # KeyError names the dangling path
    for path, ok in {**decision["must_pass"], **decision["improvements"]}.items():
        assert _resolve(result.metrics, path) == ok, path
    assert decision["confidence"] == result.confidence


def test_failed_structure_is_not_hidden_by_a_competitor_pass():
    """The original merged every dimension into one dict, so a competitor `meets_threshold: True`
    overwrote the structure's `False`. Each dimension now answers for itself."""
    result = verify(new=PLAIN_LONG_ANSWER, competitor_answers=[WEAK, MIDDLING], user_feedback=UserFeedback(5.0))

    assert result.metrics["competitors"]["meets_threshold"] is True
    assert result.metrics["user_feedback"]["meets_threshold"] is True
    assert result.metrics["structure"]["meets_threshold"] is False
    assert not result.is_valid
    assert result.metrics["decision"]["failed_must_pass"] == ["structure.meets_threshold"]
    assert any(r.startswith("structure.structure_score: ") and "必须通过项" in r for r in result.reasons)


def test_min_length_is_a_must_pass_item_whatever_else_improves():
    thresholds = with_thresholds(min_length=char_length(NEW_STUDY_ANSWER) + 1)

    result = verify(thresholds=thresholds, competitor_answers=[WEAK], user_feedback=UserFeedback(5.0))

    assert not result.is_valid
    assert result.metrics["decision"]["failed_must_pass"] == ["basic.meets_min_length"]
    assert result.metrics["decision"]["confidence_breakdown"]["must_pass"] == 0.0
    # structure 0.1 + length 0.2 + quality 0.2 + competitors 0.2 + feedback 0.3: high, still rejected
    assert result.confidence == 1.0


def test_min_length_boundary_is_inclusive():
    result = verify(thresholds=with_thresholds(min_length=char_length(NEW_STUDY_ANSWER)))

    assert result.metrics["basic"]["meets_min_length"]
    assert result.is_valid


def test_min_structure_score_boundary_is_inclusive_and_configurable():
    assert verify(thresholds=with_thresholds(min_structure_score=0.75)).metrics["structure"]["meets_threshold"]
    strict = verify(thresholds=with_thresholds(min_structure_score=0.76))
    assert not strict.metrics["structure"]["meets_threshold"] and not strict.is_valid
    lenient = verify(new=PLAIN_LONG_ANSWER, thresholds=with_thresholds(min_structure_score=0.25))
    assert lenient.metrics["structure"]["meets_threshold"]


def test_at_least_one_improvement_is_required():
    # The same answer again: must-pass items pass, but nothing improved.
    result = verify(old=NEW_STUDY_ANSWER, thresholds=with_thresholds(min_confidence=0.4))

    assert result.confidence == 0.4
    assert not result.metrics["decision"]["has_improvement"]
    assert not result.is_valid
    assert any(r.startswith("decision.improvements: ") for r in result.reasons)
    assert any(s.startswith("decision.improvements: ") for s in result.suggestions)


def test_min_confidence_gates_an_otherwise_valid_answer():
    assert verify(thresholds=with_thresholds(min_confidence=0.8)).is_valid
    rejected = verify(thresholds=with_thresholds(min_confidence=0.81))
    assert not rejected.is_valid
    assert any(r.startswith("decision.confidence: 置信度 0.80 低于") for r in rejected.reasons)


def test_min_improvement_ratio_boundary_is_inclusive():
    ratio = verify().metrics["basic"]["length_ratio"]

    assert verify(thresholds=with_thresholds(min_improvement_ratio=ratio)).metrics["basic"]["length_improved"]
    not_enough = verify(thresholds=with_thresholds(min_improvement_ratio=ratio + 0.01))
    assert not not_enough.metrics["basic"]["length_improved"]
    assert not_enough.confidence == 0.6  # lost the 0.2 of the length improvement


@pytest.mark.parametrize(("old_length", "new_length"), [(5_001, 6_001), (4_001, 4_801), (20_001, 24_001)])
def test_a_ratio_just_below_the_minimum_is_not_rounded_up_to_it(old_length, new_length):
    # Issue 9, 3.5: 6,001 / 5,001 = 1.19996 was rounded to 1.2 before the comparison.
    result = verify(old="旧" * old_length, new="新" * new_length, lang="en")

    basic = result.metrics["basic"]
    assert new_length < 1.2 * old_length
    assert basic["length_improved"] is False
    assert basic["length_ratio"] == 1.1999  # shown rounded down, never up to the threshold
    assert "basic.length_ratio: the length ratio 1.1999 does not reach 1.20x" in result.reasons


def test_a_ratio_exactly_at_the_minimum_is_an_improvement():
    basic = verify(old="旧" * 5_000, new="新" * 6_000).metrics["basic"]

    assert (basic["length_ratio"], basic["length_improved"]) == (1.2, True)


def test_empty_old_answer_counts_as_a_length_improvement():
    basic = verify(old="").metrics["basic"]

    assert basic["length_ratio"] is None
    assert basic["length_improved"]


def test_user_satisfaction_alone_can_carry_an_unchanged_answer():
    """Seed document 004: high user satisfaction adopts even when other indicators are ordinary."""
    result = verify(old=NEW_STUDY_ANSWER, user_feedback=UserFeedback(4.0, "很好"))

    assert result.confidence == 0.7  # 0.3 + 0.1 + 0.3, exactly the default minimum
    assert result.metrics["user_feedback"]["meets_threshold"]
    assert result.is_valid


def test_user_satisfaction_below_the_minimum_is_not_an_improvement():
    result = verify(old=NEW_STUDY_ANSWER, user_feedback=UserFeedback(3.9, "太啰嗦了"))

    feedback = result.metrics["user_feedback"]
    assert not feedback["meets_threshold"] and not feedback["counts_as_improvement"]
    assert not result.is_valid
    assert "user_feedback.comments: 针对用户意见改进：太啰嗦了" in result.suggestions


def test_min_user_satisfaction_is_configurable():
    result = verify(
        old=NEW_STUDY_ANSWER, user_feedback=UserFeedback(3.0), thresholds=with_thresholds(min_user_satisfaction=3.0)
    )

    assert result.metrics["user_feedback"]["meets_threshold"]
    assert result.is_valid


def test_missing_feedback_passes_by_default_but_earns_nothing():
    feedback = verify().metrics["user_feedback"]

    assert feedback == {
        "has_feedback": False,
        "satisfaction": None,
        "threshold": 4.0,
        "meets_threshold": True,
        "counts_as_improvement": False,
        "comments": "",
    }
    assert verify().metrics["decision"]["confidence_breakdown"]["user_satisfaction"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"new": ONE_LINE_ANSWER}, 0.0),
        ({"old": NEW_STUDY_ANSWER}, 0.4),  # must pass + structure
        ({}, 0.8),  # + length + quality
        ({"competitor_answers": [WEAK]}, 1.0),  # + competitors 0.2
        ({"old": NEW_STUDY_ANSWER, "competitor_answers": [WEAK]}, 0.6),
        ({"old": NEW_STUDY_ANSWER, "user_feedback": UserFeedback(5.0)}, 0.7),
    ],
)
def test_confidence_formula(kwargs, expected):
    assert verify(**kwargs).confidence == expected


def test_confidence_is_capped_at_one():
    result = verify(competitor_answers=[WEAK], user_feedback=UserFeedback(5.0))

    assert result.metrics["decision"]["confidence_uncapped"] == 1.3
    assert result.confidence == 1.0


def test_structure_bonus_needs_a_score_above_one_half():
    # Headings and lists only: 0.5 is not "> 0.5".
    half = "# 提高学习注意力\n" + "".join(f"- 第{i}条：提高学习注意力的具体建议与练习方法说明。\n" for i in range(40))
    result = verify(new=half, thresholds=with_thresholds(min_structure_score=0.5))

    assert result.metrics["structure"]["structure_score"] == 0.5
    assert result.metrics["structure"]["meets_threshold"]
    assert result.metrics["decision"]["confidence_breakdown"]["structure"] == 0.0


def test_competitor_rank_ranks_ours_with_the_same_scorer():
    result = verify(new=PLAIN_LONG_ANSWER, competitor_answers=[STRONG, MIDDLING])

    competitors = result.metrics["competitors"]
    assert competitors["rank"] == 2
    assert competitors["winner"] == "strong"
    assert competitors["scores"]["ours"]["overall"] == result.metrics["quality"]["new_scores"]["overall"]
    assert competitors["meets_threshold"]  # top 2 of 3


def test_max_competitor_rank_is_configurable():
    result = verify(
        new=PLAIN_LONG_ANSWER, competitor_answers=[STRONG, MIDDLING], thresholds=with_thresholds(max_competitor_rank=1)
    )

    assert not result.metrics["competitors"]["meets_threshold"]
    assert any(r.startswith("competitors.rank: ") and "strong" in r for r in result.reasons)
    assert any(s.startswith("competitors.winner: ") for s in result.suggestions)


def test_failed_competitors_degrade_without_blocking_or_passing():
    result = verify(competitor_answers=[TIMED_OUT])

    competitors = result.metrics["competitors"]
    assert competitors["status"] == "degraded"
    assert competitors["failures"] == [{"name": "slow", "error": "timeout after 15 s"}]
    assert not competitors["has_competitor_data"] and not competitors["meets_threshold"]
    assert result.metrics["decision"]["confidence_breakdown"]["competitor_rank"] == 0.0
    assert result.is_valid  # seed document 004: the decision is not blocked
    assert any(r.startswith("competitors.status: 竞品对比已降级") and "slow" in r for r in result.reasons)


def test_partial_competitor_result_counts_only_if_the_rank_survives_the_failures():
    one_failure = verify(competitor_answers=[WEAK, TIMED_OUT]).metrics["competitors"]
    assert (one_failure["rank"], one_failure["rank_worst_case"], one_failure["meets_threshold"]) == (1, 2, True)

    two_failures = [WEAK, TIMED_OUT, CompetitorAnswer(name="down", ok=False, error="HTTP 500")]
    result = verify(competitor_answers=two_failures)
    competitors = result.metrics["competitors"]
    assert (competitors["rank"], competitors["rank_worst_case"], competitors["meets_threshold"]) == (1, 3, False)
    assert any("最差排名 3" in r for r in result.reasons)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_degraded_comparison_that_counts_says_so(lang):
    """One provider timed out, one answered and ranks below ours: top 2 of 3 holds even if the one
    that timed out had won, so the comparison counts (seed document 004, 降级策略: a failing API
    never blocks) and no reason says it does not."""
    result = verify(competitor_answers=[WEAK, TIMED_OUT], lang=lang)

    competitors = result.metrics["competitors"]
    assert competitors["meets_threshold"] and competitors["degraded"]
    assert result.metrics["decision"]["confidence_breakdown"]["competitor_rank"] == 0.2
    status = [r for r in result.reasons if r.startswith("competitors.status: ")]
    assert len(status) == 1
    assert ("仍计为通过" if lang == "zh" else "counted all the same") in status[0]
    assert not any("不计为通过" in r or "not counted" in r for r in result.reasons)


def test_a_degraded_comparison_that_does_not_count_says_so():
    result = verify(competitor_answers=[WEAK, TIMED_OUT, CompetitorAnswer(name="down", ok=False, error="HTTP 500")])

    assert not result.metrics["competitors"]["meets_threshold"]
    assert result.metrics["decision"]["confidence_breakdown"]["competitor_rank"] == 0.0
    assert any(r.startswith("competitors.status: 竞品对比已降级，不计为通过") for r in result.reasons)


def test_disabled_competitors_are_marked_disabled():
    competitors = verify().metrics["competitors"]

    assert competitors["status"] == "disabled"
    assert not competitors["meets_threshold"] and not competitors["degraded"]
