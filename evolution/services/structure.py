"""Markdown structure read by a CommonMark parser (markdown-it-py), never by looking for `#` or
`-` anywhere: "C#" is not a heading, "well-known" is not a list, a `#` inside a code block is
code.

The structure of an answer is read from its first STRUCTURE_CHARS characters (cut at a line
break): markdown-it costs about 3 µs a character, so two answers of 200,000 characters took over
a second, while an answer's headings, lists, paragraphs and code show long before 20,000
characters. The counts in the metrics are those of that part.
"""

from dataclasses import dataclass

from markdown_it import MarkdownIt

# Block structure is all we read: skipping inline parsing (emphasis, links) halves the cost.
_PARSER = MarkdownIt("commonmark").disable("inline")
# A paragraph separation is "clear" once the prose is split into at least this many paragraphs.
MIN_PARAGRAPHS = 2
FEATURES = ("has_headings", "has_lists", "has_paragraphs", "has_code")
STRUCTURE_CHARS = 20_000


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
        """The guide's 0.0-1.0 score: a quarter for each of headings, lists, paragraphs, code."""
        return sum(getattr(self, name) for name in FEATURES) / len(FEATURES)


def structure_parse(*, text: str) -> StructureFeatures:
    if len(text) > STRUCTURE_CHARS:
        cut = text.rfind("\n", 0, STRUCTURE_CHARS + 1)
        text = text[: cut if cut > 0 else STRUCTURE_CHARS]
    headings = lists = items = paragraphs = code = chars = blocks = 0
    item_depth = 0
    for token in _PARSER.parse(text):
        kind = token.type
        if kind == "heading_open":
            headings += 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists += 1
        elif kind == "list_item_open":
            items += 1
            item_depth += 1
        elif kind == "list_item_close":
            item_depth -= 1
        elif kind == "paragraph_open" and not item_depth:
            # List items hold paragraphs (hidden in a tight list, visible in a loose one): those
            # are list text, not a separation of the prose into paragraphs.
            paragraphs += 1
        elif kind in ("fence", "code_block"):
            code += 1
        elif kind == "inline" and token.content:
            chars += len(token.content)
            blocks += 1
    return StructureFeatures(
        headings=headings,
        lists=lists,
        list_items=items,
        paragraphs=paragraphs,
        code_blocks=code,
        block_chars=chars,
        text_blocks=blocks,
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
