"""The comparison engine: completeness, usefulness and clarity of one answer on 0-10, and the
overall score weighted 30 % / 40 % / 30 % as in seed document 004. Deterministic and offline; the same
scorer ranks our answer among competitors' answers.

Completeness (10) = 5 x query-keyword coverage + 3 x length (full at 800 字) + 2 x structure score.
Usefulness (10)   = 4 x concrete suggestions (list items and action words, full at 8)
                  + 2 x examples / cases (full at 2) + 2 x data (numbers, full at 3)
                  + 2 x references (links, citations, sources; full at 2).
Clarity (10)      = 3 x headings (full at 2) + 3 x list items (full at 3)
                  + 2 x paragraphs (full at 3) + 2 x readable block length (full at <= 200 字
                  per paragraph or item on average).
"""

import re
from dataclasses import dataclass
from itertools import islice

from evolution.services.structure import StructureFeatures, structure_parse
from evolution.services.text import char_length, keyword_coverage, query_keywords

WEIGHTS = {"completeness": 0.3, "usefulness": 0.4, "clarity": 0.3}
DIMENSIONS = ("completeness", "usefulness", "clarity", "overall")
FULL_LENGTH = 800
READABLE_BLOCK = 200

_ACTIONS = re.compile(
    r"建议|可以|应该|尝试|步骤|首先|其次|然后|最后|方法|技巧|避免|保持|使用|设置|安排|练习|"
    r"\b(?:should|try|use|avoid|step|first|then|finally|make sure|consider|start|keep|set)\b",
    re.IGNORECASE,
)
_EXAMPLES = re.compile(
    r"例如|比如|举例|案例|例子|譬如|\bfor example\b|\be\.g\.|\bfor instance\b|\bsuch as\b", re.IGNORECASE
)
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
_REFERENCES = re.compile(
    r"https?://|\[\d+\]|参考|来源|研究(?:表明|显示|发现)|据.{0,12}(?:报告|统计|研究)|"
    r"\baccording to\b|\bresearch\b|\bstud(?:y|ies)\b|\bsource\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class QualityScores:
    completeness: float
    usefulness: float
    clarity: float
    overall: float
    keyword_coverage: float
    missing_keywords: tuple[str, ...]

    def scores(self) -> dict[str, float]:
        return {
            "completeness": self.completeness,
            "usefulness": self.usefulness,
            "clarity": self.clarity,
            "overall": self.overall,
        }


def _part(weight: float, value: float, full: float) -> float:
    return weight * min(1.0, value / full) if full else weight


def _count(pattern: re.Pattern[str], text: str, full: int) -> int:
    """Matches of `pattern`, counted up to `full`: past it a part scores the same, and a long
    answer has thousands of numbers."""
    return sum(1 for _ in islice(pattern.finditer(text), full))


def quality_score(*, query: str, response: str, features: StructureFeatures | None = None) -> QualityScores:
    features = features or structure_parse(text=response)
    coverage, missing = keyword_coverage(keywords=query_keywords(query), text=response)
    length = char_length(response)

    completeness = 5 * coverage + _part(3, length, FULL_LENGTH) + 2 * features.score
    usefulness = (
        _part(4, features.list_items + _count(_ACTIONS, response, 8), 8)
        + _part(2, _count(_EXAMPLES, response, 2) + features.code_blocks, 2)
        + _part(2, _count(_NUMBERS, response, 3), 3)
        + _part(2, _count(_REFERENCES, response, 2), 2)
    )
    average_block = features.block_chars / features.text_blocks if features.text_blocks else 0
    readability = 0.0 if not average_block else min(1.0, READABLE_BLOCK / average_block)
    clarity = (
        _part(3, features.headings, 2)
        + _part(3, features.list_items, 3)
        + _part(2, features.paragraphs, 3)
        + 2 * readability
    )
    completeness, usefulness, clarity = (round(v, 2) for v in (completeness, usefulness, clarity))
    overall = round(
        WEIGHTS["completeness"] * completeness + WEIGHTS["usefulness"] * usefulness + WEIGHTS["clarity"] * clarity, 2
    )
    return QualityScores(
        completeness=completeness,
        usefulness=usefulness,
        clarity=clarity,
        overall=overall,
        keyword_coverage=round(coverage, 4),
        missing_keywords=tuple(missing),
    )


def quality_metrics(*, old: QualityScores, new: QualityScores) -> dict:
    improvement: dict[str, float | bool] = {
        f"{name}_improved": getattr(new, name) > getattr(old, name) for name in DIMENSIONS
    }
    for name in DIMENSIONS:
        improvement[f"{name}_delta"] = round(getattr(new, name) - getattr(old, name), 2)
    return {
        "new_scores": new.scores(),
        "old_scores": old.scores(),
        "improvement": improvement,
        "keywords": {
            "coverage": new.keyword_coverage,
            "missing": list(new.missing_keywords),
            "old_coverage": old.keyword_coverage,
        },
        "weights": dict(WEIGHTS),
    }
