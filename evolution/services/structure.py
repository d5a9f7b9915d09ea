"""Markdown structure of an answer (seed document 004, 结构化验证): headings, lists, paragraphs and
code blocks, counted by `core.markdown.markdown_outline`, never by looking for `#` or `-` anywhere.

The structure of an answer is read from its first STRUCTURE_CHARS characters (cut at a line
break): the API accepts answers of 200,000 characters, an answer's headings, lists, paragraphs
and code show long before 30,000, and up to there the scoring stays within seed document 004's
10 ms (`bench/bench_structure.py`). The counts in the metrics are those of that part.
"""

from dataclasses import dataclass

from core.markdown import markdown_outline

# A paragraph separation is "clear" once the prose is split into at least this many paragraphs.
MIN_PARAGRAPHS = 2
FEATURES = ("has_headings", "has_lists", "has_paragraphs", "has_code")
STRUCTURE_CHARS = 30_000


@dataclass(frozen=True)
class StructureFeatures:
    headings: int
    lists: int
    list_items: int
    paragraphs: int
    code_blocks: int
    block_chars: int  # characters of text in paragraphs and list items, for readability
    text_blocks: int

    @property
    def has_headings(self) -> bool:
        return self.headings > 0

    @property
    def has_lists(self) -> bool:
        return self.lists > 0

    @property
    def has_paragraphs(self) -> bool:
        return self.paragraphs >= MIN_PARAGRAPHS

    @property
    def has_code(self) -> bool:
        return self.code_blocks > 0

    @property
    def score(self) -> float:
        """Seed document 004's 0.0-1.0 score: a quarter for each of headings, lists, paragraphs, code."""
        return sum(getattr(self, name) for name in FEATURES) / len(FEATURES)


def structure_parse(*, text: str) -> StructureFeatures:
    if len(text) > STRUCTURE_CHARS:
        cut = text.rfind("\n", 0, STRUCTURE_CHARS + 1)
        text = text[: cut if cut > 0 else STRUCTURE_CHARS]
    outline = markdown_outline(text)
    return StructureFeatures(
        headings=outline.headings,
        lists=outline.lists,
        list_items=outline.list_items,
        paragraphs=outline.paragraphs,
        code_blocks=outline.code_blocks,
        block_chars=outline.text_chars,
        text_blocks=outline.text_blocks,
    )


def structure_metrics(*, features: StructureFeatures, min_structure_score: float) -> dict:
    score = features.score
    return {
        "has_headings": features.has_headings,
        "has_lists": features.has_lists,
        "has_paragraphs": features.has_paragraphs,
        "has_code": features.has_code,
        "structure_score": score,
        "threshold": min_structure_score,
        "meets_threshold": score >= min_structure_score,
        "counts": {
            "headings": features.headings,
            "lists": features.lists,
            "list_items": features.list_items,
            "paragraphs": features.paragraphs,
            "code_blocks": features.code_blocks,
        },
    }
