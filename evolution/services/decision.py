"""Seed document 004's five verification dimensions and its decision rules, as pure functions.

Decision (seed document 004, 验证决策逻辑):
- must pass (any failure rejects): new length >= min_length; structure score >= min_structure_score.
- improvements (at least one): length ratio >= min_improvement_ratio; overall quality better than
  the old answer's; competitor rank <= max_competitor_rank; user satisfaction >= min_user_satisfaction.
- confidence: +0.3 all must-pass items passed, +0.1 structure score > 0.5, +0.2 length improved,
  +0.2 quality improved, +0.2 competitor rank good, +0.3 user satisfaction high; capped at 1.0.
- is_valid = no must-pass failure AND confidence >= min_confidence AND at least one improvement.

Degradation (seed document 004, 优化策略 3, 降级策略: a failing API never blocks the flow): a missing
answer (no feedback, competitors disabled or failing) never blocks the decision and never counts
as an improvement nor earns confidence. A partial competitor result counts when the rank holds
even if every failed provider had beaten us (one of two providers timed out and the other ranks
below us: top 2 of 3 whatever the missing answer) and its reasons say so; otherwise
`competitors.meets_threshold` is false and the reasons say it does not count.
"""

from typing import Any

from evolution.services.competitors import OURS, CompetitorAnswer
from evolution.services.messages import REASONS, SUGGESTIONS, message_render
from evolution.services.quality import QualityScores, quality_metrics, quality_score
from evolution.services.structure import FEATURES, structure_metrics, structure_parse
from evolution.services.text import char_length
from evolution.services.types import Thresholds, UserFeedback, VerificationResult

# Confidence weights in tenths, so sums are exact (0.3 + 0.1 + 0.3 is 0.7, not 0.7000000000000001).
CONFIDENCE_TENTHS = {
    "must_pass": 3,
    "structure": 1,
    "length_improved": 2,
    "quality_improved": 2,
    "competitor_rank": 2,
    "user_satisfaction": 3,
}
STRUCTURE_BONUS_ABOVE = 0.5
# A quality dimension under this (of 10) earns a suggestion.
WEAK_SCORE = 6.0


def basic_metrics(*, old_response: str, new_response: str, thresholds: Thresholds) -> dict[str, Any]:
    """Lengths and their ratio. The unrounded ratio is compared; `length_ratio` is for display,
    rounded down to 4 decimals (integer arithmetic), so 6,001 / 5,001 shows 1.1999, never a 1.2
    it does not reach, and the shown value used as the threshold still passes."""
    old_length, new_length = char_length(old_response), char_length(new_response)
    if old_length:
        improved = new_length / old_length >= thresholds.min_improvement_ratio
        ratio = new_length * 10_000 // old_length / 10_000
    else:
        improved, ratio = new_length > 0, None
    return {
        "old_length": old_length,
        "new_length": new_length,
        "length_unit": "non_whitespace_characters",
        "length_ratio": ratio,
        "length_improved": improved,
        "min_improvement_ratio": thresholds.min_improvement_ratio,
        "meets_min_length": new_length >= thresholds.min_length,
        "min_length": thresholds.min_length,
    }


def competitor_metrics(
    *, query: str, ours: QualityScores, answers: list[CompetitorAnswer] | None, thresholds: Thresholds
) -> dict[str, Any]:
    """Rank our answer among the competitors' answers with the same scorer. `answers` None means
    the comparison is disabled (no provider configured, or the caller skipped it)."""
    max_rank = thresholds.max_competitor_rank
    providers = [
        {"name": a.name, "ok": a.ok, "error": a.error or None, "duration_ms": a.duration_ms} for a in answers or []
    ]
    failures = [{"name": a.name, "error": a.error} for a in answers or [] if not a.ok]
    received = [a for a in answers or [] if a.ok]
    metrics: dict[str, Any] = {
        "status": "disabled" if answers is None else ("degraded" if failures else "ok"),
        "has_competitor_data": bool(received),
        "degraded": bool(failures),
        "failures": failures,
        "providers": providers,
        "rank": None,
        "rank_worst_case": None,
        "participants": None,
        "scores": {},
        "winner": None,
        "threshold": max_rank,
        "meets_threshold": False,
    }
    if not received:
        return metrics
    scores = {OURS: ours.scores()}
    for answer in received:
        scores[answer.name] = quality_score(query=query, response=answer.content).scores()
    # Ties go to us: the rank counts only competitors strictly better.
    rank = 1 + sum(1 for a in received if scores[a.name]["overall"] > ours.overall)
    winner = max(scores, key=lambda name: (scores[name]["overall"], name == OURS))
    worst = rank + len(failures)
    metrics.update(
        rank=rank,
        rank_worst_case=worst,
        participants=len(received) + 1,
        scores=scores,
        winner=winner,
        meets_threshold=worst <= max_rank,
    )
    return metrics


def feedback_metrics(*, feedback: UserFeedback | None, thresholds: Thresholds) -> dict[str, Any]:
    """Without feedback the dimension passes by default (seed document 004) but proves no improvement."""
    if feedback is None:
        return {
            "has_feedback": False,
            "satisfaction": None,
            "threshold": thresholds.min_user_satisfaction,
            "meets_threshold": True,
            "counts_as_improvement": False,
            "comments": "",
        }
    meets = feedback.satisfaction >= thresholds.min_user_satisfaction
    return {
        "has_feedback": True,
        "satisfaction": feedback.satisfaction,
        "threshold": thresholds.min_user_satisfaction,
        "meets_threshold": meets,
        "counts_as_improvement": meets,
        "comments": feedback.comments,
    }


def evolution_decide(
    *,
    query: str,
    old_response: str,
    new_response: str,
    thresholds: Thresholds,
    user_feedback: UserFeedback | None = None,
    competitor_answers: list[CompetitorAnswer] | None = None,
    lang: str = "zh",
) -> VerificationResult:
    """Verify a new answer against the old one. Pure: no database, no network."""
    basic = basic_metrics(old_response=old_response, new_response=new_response, thresholds=thresholds)
    new_features = structure_parse(text=new_response)
    old_features = structure_parse(text=old_response)
    structure = structure_metrics(features=new_features, min_structure_score=thresholds.min_structure_score)
    structure["old_structure_score"] = old_features.score
    new_quality = quality_score(query=query, response=new_response, features=new_features)
    old_quality = quality_score(query=query, response=old_response, features=old_features)
    quality = quality_metrics(old=old_quality, new=new_quality)
    competitors = competitor_metrics(query=query, ours=new_quality, answers=competitor_answers, thresholds=thresholds)
    feedback = feedback_metrics(feedback=user_feedback, thresholds=thresholds)

    must_pass = {
        "basic.meets_min_length": basic["meets_min_length"],
        "structure.meets_threshold": structure["meets_threshold"],
    }
    improvements = {
        "basic.length_improved": basic["length_improved"],
        "quality.improvement.overall_improved": quality["improvement"]["overall_improved"],
        "competitors.meets_threshold": competitors["meets_threshold"],
        "user_feedback.counts_as_improvement": feedback["counts_as_improvement"],
    }
    earned = {
        "must_pass": all(must_pass.values()),
        "structure": structure["structure_score"] > STRUCTURE_BONUS_ABOVE,
        "length_improved": improvements["basic.length_improved"],
        "quality_improved": improvements["quality.improvement.overall_improved"],
        "competitor_rank": improvements["competitors.meets_threshold"],
        "user_satisfaction": improvements["user_feedback.counts_as_improvement"],
    }
    tenths = sum(CONFIDENCE_TENTHS[name] for name, ok in earned.items() if ok)
    confidence = min(10, tenths) / 10
    has_improvement = any(improvements.values())
    is_valid = all(must_pass.values()) and confidence >= thresholds.min_confidence and has_improvement

    metrics = {
        "basic": basic,
        "structure": structure,
        "quality": quality,
        "competitors": competitors,
        "user_feedback": feedback,
        "decision": {
            "must_pass": must_pass,
            "failed_must_pass": [name for name, ok in must_pass.items() if not ok],
            "improvements": improvements,
            "has_improvement": has_improvement,
            "confidence": confidence,
            "confidence_breakdown": {name: CONFIDENCE_TENTHS[name] / 10 if ok else 0.0 for name, ok in earned.items()},
            "confidence_uncapped": tenths / 10,
            "min_confidence": thresholds.min_confidence,
            "meets_confidence": confidence >= thresholds.min_confidence,
        },
    }
    reasons, suggestions = _explain(metrics, new_quality, confidence, thresholds, lang)
    return VerificationResult(
        is_valid=is_valid, confidence=confidence, reasons=reasons, suggestions=suggestions, metrics=metrics
    )


def _explain(
    metrics: dict[str, Any], new_quality: QualityScores, confidence: float, thresholds: Thresholds, lang: str
) -> tuple[list[str], list[str]]:
    reasons: list[str] = []
    suggestions: list[str] = []

    def reason(code: str, metric: str, **params: Any) -> None:
        reasons.append(message_render(catalog=REASONS, code=code, metric=metric, lang=lang, params=params))

    def suggest(code: str, metric: str, **params: Any) -> None:
        suggestions.append(message_render(catalog=SUGGESTIONS, code=code, metric=metric, lang=lang, params=params))

    basic, structure, quality = metrics["basic"], metrics["structure"], metrics["quality"]
    competitors, feedback, decision = metrics["competitors"], metrics["user_feedback"], metrics["decision"]

    length_params = {"new_length": basic["new_length"], "min_length": basic["min_length"]}
    if basic["meets_min_length"]:
        reason("min_length_met", "basic.new_length", **length_params)
    else:
        reason("min_length_failed", "basic.new_length", **length_params)
        suggest(
            "expand_length",
            "basic.new_length",
            min_length=basic["min_length"],
            missing=basic["min_length"] - basic["new_length"],
        )

    structure_params = {"score": structure["structure_score"], "threshold": structure["threshold"]}
    if structure["meets_threshold"]:
        reason("structure_met", "structure.structure_score", **structure_params)
    else:
        reason("structure_failed", "structure.structure_score", **structure_params)
        for feature in FEATURES:
            if not structure[feature]:
                suggest(f"add_{feature.removeprefix('has_')}", f"structure.{feature}")

    ratio = basic["length_ratio"]
    ratio_params = {"min_ratio": basic["min_improvement_ratio"]}
    if basic["length_improved"]:
        reason(
            "length_improved", "basic.length_ratio", ratio=ratio if ratio is not None else float("inf"), **ratio_params
        )
    else:
        reason(
            "length_not_improved",
            "basic.length_ratio",
            ratio=ratio if ratio is not None else "-",  # 4 decimals: 1.1999 must not read 1.20
            **ratio_params,
        )

    old_overall, new_overall = quality["old_scores"]["overall"], quality["new_scores"]["overall"]
    delta = quality["improvement"]["overall_delta"]
    code = "quality_improved" if quality["improvement"]["overall_improved"] else "quality_not_improved"
    reason(code, "quality.new_scores.overall", old=old_overall, new=new_overall, delta=delta)
    if quality["keywords"]["missing"]:
        suggest(
            "cover_keywords",
            "quality.keywords.missing",
            keywords=("、" if lang == "zh" else ", ").join(quality["keywords"]["missing"]),
        )
    if new_quality.usefulness < WEAK_SCORE:
        suggest("more_useful", "quality.new_scores.usefulness", score=new_quality.usefulness)
    if new_quality.clarity < WEAK_SCORE and structure["meets_threshold"]:
        suggest("clearer", "quality.new_scores.clarity", score=new_quality.clarity)

    if competitors["has_competitor_data"]:
        rank_params = {
            "rank": competitors["rank"],
            "participants": competitors["participants"],
            "max_rank": competitors["threshold"],
        }
        if competitors["meets_threshold"]:
            reason("competitor_rank_met", "competitors.rank", **rank_params)
        elif competitors["rank"] <= competitors["threshold"]:
            reason(
                "competitor_rank_uncertain",
                "competitors.rank",
                failed=len(competitors["failures"]),
                worst=competitors["rank_worst_case"],
                **rank_params,
            )
        else:
            reason("competitor_rank_failed", "competitors.rank", winner=competitors["winner"], **rank_params)
            winner = competitors["winner"]
            suggest(
                "study_winner",
                "competitors.winner",
                winner=winner,
                winner_score=competitors["scores"][winner]["overall"],
                ours=competitors["scores"][OURS]["overall"],
            )
    if competitors["degraded"]:
        errors = "; ".join(f"{f['name']}: {f['error']}" for f in competitors["failures"])
        if competitors["meets_threshold"]:  # the rank holds in the worst case: the comparison counts
            reason(
                "competitors_degraded_counted",
                "competitors.status",
                errors=errors,
                worst=competitors["rank_worst_case"],
                max_rank=competitors["threshold"],
            )
        else:
            reason("competitors_degraded", "competitors.status", errors=errors)
        suggest("fix_providers", "competitors.status", names=", ".join(f["name"] for f in competitors["failures"]))

    if feedback["has_feedback"]:
        params = {"satisfaction": feedback["satisfaction"], "threshold": feedback["threshold"]}
        if feedback["meets_threshold"]:
            reason("feedback_met", "user_feedback.satisfaction", **params)
        else:
            reason("feedback_failed", "user_feedback.satisfaction", **params)
            if feedback["comments"]:
                suggest("address_feedback", "user_feedback.comments", comments=feedback["comments"])

    if not decision["has_improvement"]:
        reason("no_improvement", "decision.improvements")
        suggest("beat_old", "decision.improvements", min_ratio=thresholds.min_improvement_ratio)
    code = "confidence_met" if decision["meets_confidence"] else "confidence_failed"
    reason(code, "decision.confidence", confidence=confidence, min_confidence=thresholds.min_confidence)
    return reasons, suggestions
