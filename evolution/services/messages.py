"""Reasons and suggestions in English and Chinese. Each is rendered as `"<metric>: <message>"`
so a reader (and a program) always knows which metric it is about."""

from typing import Any

LANGUAGES = ("zh", "en")

REASONS: dict[str, dict[str, str]] = {
    "min_length_met": {
        "en": "the new answer has {new_length} characters, meeting the minimum of {min_length}",
        "zh": "新回答 {new_length} 字，满足最小长度 {min_length} 字",
    },
    "min_length_failed": {
        "en": "the new answer has only {new_length} characters, below the minimum of {min_length} (must pass)",
        "zh": "新回答仅 {new_length} 字，低于最小长度 {min_length} 字（必须通过项）",
    },
    "structure_met": {
        "en": "structure score {score:.2f} meets the minimum of {threshold:.2f}",
        "zh": "结构化分数 {score:.2f} 达到最低要求 {threshold:.2f}",
    },
    "structure_failed": {
        "en": "structure score {score:.2f} is below the minimum of {threshold:.2f} (must pass)",
        "zh": "结构化分数 {score:.2f} 低于最低要求 {threshold:.2f}（必须通过项）",
    },
    "length_improved": {
        "en": "the answer is {ratio:.2f}x as long as before (at least {min_ratio:.2f}x required)",
        "zh": "回答长度为旧版本的 {ratio:.2f} 倍（要求至少 {min_ratio:.2f} 倍）",
    },
    "length_not_improved": {
        "en": "the length ratio {ratio} does not reach {min_ratio:.2f}x",
        "zh": "长度比例 {ratio} 未达到 {min_ratio:.2f} 倍",
    },
    "quality_improved": {
        "en": "overall quality rose from {old:.2f} to {new:.2f} ({delta:+.2f})",
        "zh": "整体质量从 {old:.2f} 提升到 {new:.2f}（{delta:+.2f}）",
    },
    "quality_not_improved": {
        "en": "overall quality {new:.2f} is not better than the old {old:.2f} ({delta:+.2f})",
        "zh": "整体质量 {new:.2f} 未优于旧版本的 {old:.2f}（{delta:+.2f}）",
    },
    "competitor_rank_met": {
        "en": "ranked {rank} of {participants} against competitors (top {max_rank} required)",
        "zh": "竞品对比排名第 {rank}（共 {participants} 个），满足前 {max_rank} 名要求",
    },
    "competitor_rank_failed": {
        "en": "ranked {rank} of {participants} against competitors; top {max_rank} required (winner: {winner})",
        "zh": "竞品对比排名第 {rank}（共 {participants} 个），未进入前 {max_rank} 名（第一名：{winner}）",
    },
    "competitor_rank_uncertain": {
        "en": "ranked {rank} among the answers received, but {failed} provider(s) failed, so top {max_rank} "
        "is not proven (worst case rank {worst})",
        "zh": "在收到的回答中排名第 {rank}，但有 {failed} 个竞品调用失败，无法证明进入前 {max_rank} 名（最差排名 {worst}）",
    },
    "competitors_degraded": {
        "en": "competitor comparison degraded, not counted as a pass: {errors}",
        "zh": "竞品对比已降级，不计为通过：{errors}",
    },
    "competitors_degraded_counted": {
        "en": "competitor comparison degraded ({errors}), counted all the same: even if every failed provider "
        "had ranked above us, we would rank {worst}, within the top {max_rank}",
        "zh": "竞品对比已降级（{errors}），仍计为通过：即使调用失败的竞品都排在我方之前，我方最差排名第 {worst} 名，"
        "仍在前 {max_rank} 名内",
    },
    "feedback_met": {
        "en": "user satisfaction {satisfaction:.1f} meets the minimum of {threshold:.1f}",
        "zh": "用户满意度 {satisfaction:.1f} 达到最低要求 {threshold:.1f}",
    },
    "feedback_failed": {
        "en": "user satisfaction {satisfaction:.1f} is below the minimum of {threshold:.1f}",
        "zh": "用户满意度 {satisfaction:.1f} 低于最低要求 {threshold:.1f}",
    },
    "no_improvement": {
        "en": "no improvement item passed (length, quality, competitors, user feedback)",
        "zh": "没有任何改进项通过（长度、质量、竞品、用户反馈）",
    },
    "confidence_met": {
        "en": "confidence {confidence:.2f} meets the minimum of {min_confidence:.2f}",
        "zh": "置信度 {confidence:.2f} 达到最低要求 {min_confidence:.2f}",
    },
    "confidence_failed": {
        "en": "confidence {confidence:.2f} is below the minimum of {min_confidence:.2f}",
        "zh": "置信度 {confidence:.2f} 低于最低要求 {min_confidence:.2f}",
    },
}

SUGGESTIONS: dict[str, dict[str, str]] = {
    "expand_length": {
        "en": "expand the answer to at least {min_length} characters ({missing} more)",
        "zh": "将回答扩充到至少 {min_length} 字（还差 {missing} 字）",
    },
    "add_headings": {
        "en": "organise the answer under markdown headings (`#` / `##`)",
        "zh": "用 Markdown 标题（# / ##）组织回答的各个部分",
    },
    "add_lists": {
        "en": "present steps or points as a markdown list (`-` or `1.`)",
        "zh": "把步骤或要点写成 Markdown 列表（- 或 1.）",
    },
    "add_paragraphs": {
        "en": "split the text into paragraphs separated by a blank line",
        "zh": "用空行把正文分成清晰的段落",
    },
    "add_code": {
        "en": "where it helps, add an example in a fenced code block (```)",
        "zh": "在合适的地方加入代码块（```）示例",
    },
    "cover_keywords": {
        "en": "address the question's key terms: {keywords}",
        "zh": "覆盖问题中的关键词：{keywords}",
    },
    "more_useful": {
        "en": "add concrete steps, examples, data and references (usefulness {score:.1f}/10)",
        "zh": "补充具体建议、案例、数据支持和引用（实用性 {score:.1f}/10）",
    },
    "clearer": {
        "en": "make it clearer with headings, lists and shorter paragraphs (clarity {score:.1f}/10)",
        "zh": "用标题、列表和更短的段落提升清晰度（清晰度 {score:.1f}/10）",
    },
    "beat_old": {
        "en": "the new version must improve on the old one: at least {min_ratio:.2f}x its length or a higher "
        "overall quality score",
        "zh": "新版本需要优于旧版本：长度至少为旧版本的 {min_ratio:.2f} 倍，或整体质量得分更高",
    },
    "study_winner": {
        "en": "compare with the best competitor answer ({winner}, overall {winner_score:.2f} vs ours {ours:.2f})",
        "zh": "参考排名第一的竞品回答（{winner}，整体 {winner_score:.2f}，我方 {ours:.2f}）",
    },
    "fix_providers": {
        "en": "check the competitor providers that failed: {names}",
        "zh": "检查调用失败的竞品服务：{names}",
    },
    "address_feedback": {
        "en": "address the user's comments: {comments}",
        "zh": "针对用户意见改进：{comments}",
    },
}


def message_render(
    *, catalog: dict[str, dict[str, str]], code: str, metric: str, lang: str, params: dict[str, Any]
) -> str:
    return f"{metric}: {catalog[code][lang].format(**params)}"
