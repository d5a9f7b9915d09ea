"""Markdown answers read by one CommonMark parser, never by looking for `#` or `-` anywhere: "C#"
is not a heading, "well-known" is not a list, a `# heading` or a `根因：` line inside a code block
is code.

The parser is pyromark (pulldown-cmark, in Rust): about 0.1 µs a character, where markdown-it-py
took 3 µs, which kept seed document 004's structure target (结构验证 < 10ms) out of reach past
3,000 characters. markdown-it-py still renders answers as HTML for people (`core/adminkit/
content.py`); everything that reads an answer's structure reads it here:
- `markdown_outline`: how many headings, lists, list items, paragraphs and code blocks, and how
  much text: evolution's structure score, on the hot path (events without source ranges, about
  3 µs a block);
- `markdown_read`: the blocks (headings, paragraphs, lists and their items, code, HTML, quotes,
  rules) with their lines and text;
- `answer_sections`: the root-cause, conclusion and solution sections, under a heading or after a
  label line (`**根因**：...`, `Summary: ...`, a bold line alone such as `**Remediation**`): case
  extraction files them, the AIOps checks read the lead;
- `answer_lead`: the part that states the main finding.

Pure Python: no Django.
"""

import bisect
import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

import pyromark


class BlockKind(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST = "list"
    ITEM = "item"
    CODE = "code"
    HTML = "html"
    QUOTE = "quote"
    RULE = "rule"


# Blocks whose lines are taken as they are: never a heading, a label or prose.
VERBATIM = frozenset({BlockKind.CODE, BlockKind.HTML})
_CONTAINERS = {"Paragraph": BlockKind.PARAGRAPH, "Item": BlockKind.ITEM}
_NEWLINE = re.compile(b"\n")
_NESTED = {"Heading": BlockKind.HEADING, "List": BlockKind.LIST, "CodeBlock": BlockKind.CODE}


@dataclass(slots=True)
class Block:
    kind: BlockKind
    first_line: int  # 0-based, of the block's first source line
    last_line: int  # inclusive
    depth: int  # how many list items hold the block
    text: str = ""  # a heading's, paragraph's or list item's own text (markers dropped); code's content


@dataclass(frozen=True)
class MarkdownText:
    lines: list[str]  # the source's lines (line endings normalised to \n)
    blocks: list[Block]  # in document order; a container (list, item, quote) before what it holds

    @cached_property
    def verbatim_lines(self) -> frozenset[int]:
        return frozenset(
            line for b in self.blocks if b.kind in VERBATIM for line in range(b.first_line, b.last_line + 1)
        )

    @cached_property
    def headings(self) -> list[Block]:
        return [b for b in self.blocks if b.kind is BlockKind.HEADING]


def markdown_read(text: str) -> MarkdownText:
    """Every block of `text`, from one parse (CommonMark, no extensions)."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    source = text.encode()
    newlines = [match.start() for match in _NEWLINE.finditer(source)]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset)

    blocks: list[Block] = []
    open_blocks: list[Block | None] = []  # per Start event: its block, None for inline spans
    texts: list[Block] = []  # the innermost block collecting text
    depth = 0
    for event, span in pyromark.events_with_range(text):
        if isinstance(event, str):  # SoftBreak, HardBreak, Rule
            if event == "Rule":
                line = line_of(span["start"])
                blocks.append(Block(BlockKind.RULE, line, line, depth))
            elif texts:
                texts[-1].text += "\n"
            continue
        (tag, value), *_ = event.items()
        if tag == "Start":
            name = value if isinstance(value, str) else next(iter(value))
            kind = _CONTAINERS.get(name) or _NESTED.get(name)
            if kind is None and name == "BlockQuote":
                kind = BlockKind.QUOTE
            elif kind is None and name == "HtmlBlock":
                kind = BlockKind.HTML
            if kind is None:
                open_blocks.append(None)
                continue
            start, end = line_of(span["start"]), line_of(max(span["start"], span["end"] - 1))
            block = Block(kind, start, end, depth)
            blocks.append(block)
            open_blocks.append(block)
            if kind in (BlockKind.HEADING, BlockKind.PARAGRAPH, BlockKind.ITEM, BlockKind.CODE):
                texts.append(block)
            if kind is BlockKind.ITEM:
                depth += 1
        elif tag == "End":
            block = open_blocks.pop()
            if block is None:
                continue
            if texts and texts[-1] is block:
                texts.pop()
            if block.kind is BlockKind.ITEM:
                depth -= 1
        elif texts and tag in ("Text", "Code"):
            texts[-1].text += value
    return MarkdownText(lines=text.split("\n"), blocks=blocks)


@dataclass(frozen=True, slots=True)
class Outline:
    headings: int
    lists: int
    list_items: int
    paragraphs: int  # outside list items: the prose's paragraphs
    code_blocks: int
    text_chars: int  # characters of text in headings, paragraphs and list items (markers dropped)
    text_blocks: int  # headings, paragraphs and list items with text


_TEXT_HOLDERS = frozenset({"Heading", "Paragraph", "Item"})


def markdown_outline(text: str) -> Outline:
    """The counts `markdown_read`'s blocks give, without their lines: one pass over the events."""
    headings = lists = items = paragraphs = code = chars = blocks = depth = 0
    names: list[str] = []  # the open elements
    sizes: list[int] = []  # characters so far of each open heading, paragraph and item
    for event in pyromark.events(text or ""):
        if event.__class__ is str:  # SoftBreak, HardBreak, Rule
            if sizes and event != "Rule":
                sizes[-1] += 1
            continue
        value = event.get("Text")
        if value is None:
            value = event.get("Code")
        if value is not None:
            if sizes:
                sizes[-1] += len(value)
            continue
        value = event.get("Start")
        if value is not None:
            name = value if value.__class__ is str else next(iter(value))
            names.append(name)
            if name in _TEXT_HOLDERS:
                sizes.append(0)
                headings += name == "Heading"
                paragraphs += name == "Paragraph" and not depth
                if name == "Item":
                    items += 1
                    depth += 1
            else:
                lists += name == "List"
                code += name == "CodeBlock"
        elif "End" in event:
            name = names.pop()
            if name in _TEXT_HOLDERS:
                size = sizes.pop()
                chars += size
                blocks += size > 0
                depth -= name == "Item"
    return Outline(headings, lists, items, paragraphs, code, chars, blocks)


class SectionKind(StrEnum):
    ROOT_CAUSE = "root_cause"
    CONCLUSION = "conclusion"
    SOLUTION = "solution"


# Titles of sections, matched at the start of a heading or label once its numbering ("1.",
# "2)", "一、") and markup are dropped, case-insensitively; the first kind that matches wins.
SECTION_TITLES: dict[SectionKind, tuple[str, ...]] = {
    SectionKind.ROOT_CAUSE: ("root cause", "root-cause", "cause", "根因", "根本原因", "原因", "问题原因", "故障原因"),
    SectionKind.CONCLUSION: (
        "conclusion", "summary", "tl;dr", "findings", "diagnosis result", "结论", "总结", "小结", "摘要", "诊断结论",
        "诊断结果",
    ),
    SectionKind.SOLUTION: (
        "fix", "solution", "resolution", "remediation", "mitigation", "recommendation", "recommended", "next step",
        "action", "how to fix", "workaround", "解决", "处理", "修复", "建议", "处置", "措施", "应对", "优化方案",
    ),
}  # fmt: skip
# Titles that name a section only alone: "诊断报告" / "Diagnosis report" is the whole answer's title.
WHOLE_TITLES = {"diagnosis": SectionKind.ROOT_CAUSE, "诊断": SectionKind.ROOT_CAUSE}
# Labels of an answer's field lines ("**Error code**: `...`  **Service**: ..."): its metadata, which
# ends the section before it.
FIELD_LABELS = frozenset(
    {"error code", "错误码", "错误代码", "service", "服务", "alert", "告警", "severity", "级别", "影响服务"}
)

# `Label: text`, `**Label**：text`, `**Label：** text`, `- Label: text`; never a URL's scheme.
_INLINE_LABEL = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?([^:：*\n]{1,20}?)(?:\*\*|__)?\s*[:：](?!//)\s*(?:\*\*|__)?\s*(.*)$"
)
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)([^*\n]{1,30}?)(?:\*\*|__)\s*[:：]?\s*$")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)、]?|[一二三四五六七八九十]+、|[（(]\d+[)）])\s*")
_TITLE_MARKUP = re.compile(r"[#*_`:：\s]+")
_HAS_WORD = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class Section:
    kind: SectionKind
    title: str  # the heading or label as written, markup dropped
    body: str


def section_kind(title: str) -> SectionKind | None:
    """The kind of section a heading or label names, or None."""
    normalised = _NUMBERING.sub("", _TITLE_MARKUP.sub(" ", title).strip()).strip().lower()
    if not _HAS_WORD.search(normalised):
        return None
    if normalised in WHOLE_TITLES:
        return WHOLE_TITLES[normalised]
    for kind, titles in SECTION_TITLES.items():
        if normalised.startswith(titles):
            return kind
    return None


def _label(line: str) -> tuple[str, str] | None:
    """(label, text after it) of a `Label: text` line or of a bold line alone (`**修复方案**`)."""
    match = _INLINE_LABEL.match(line)
    if match and _HAS_WORD.search(_NUMBERING.sub("", match.group(1).strip())):
        return match.group(1).strip(), match.group(2)
    match = _BOLD_LINE.match(line)
    return (match.group(1).strip(), "") if match else None


def _is_field_line(line: str) -> bool:
    label = _label(line)
    return label is not None and label[0].lower() in FIELD_LABELS


def answer_sections(text: str, *, document: MarkdownText | None = None) -> dict[SectionKind, Section]:
    """The first section of each kind: under a heading, or, for a kind no heading gives, after a
    label line, to the next label line. A field line ends a section; lines of code and HTML blocks
    are never headings nor labels (they stay in the section that holds them)."""
    document = document or markdown_read(text)
    lines, headings = document.lines, document.headings
    found: dict[SectionKind, Section] = {}
    for position, heading in enumerate(headings):
        kind = section_kind(heading.text)
        if kind is None or kind in found:
            continue
        end = headings[position + 1].first_line if position + 1 < len(headings) else len(lines)
        end = next((i for i in range(heading.last_line + 1, end) if _is_field_line(lines[i])), end)
        body = "\n".join(lines[heading.last_line + 1 : end]).strip()
        if body:
            found[kind] = Section(kind, heading.text.strip(), body)
    if len(found) < len(SectionKind):
        for kind, section in _label_sections(document).items():
            found.setdefault(kind, section)
    return found


def _label_sections(document: MarkdownText) -> dict[SectionKind, Section]:
    """`**根因**：...` / `Root cause: ...` / `**Remediation**` lines; a section runs to the next
    label line or heading."""
    found: dict[SectionKind, Section] = {}
    current: tuple[SectionKind, str] | None = None
    collected: list[str] = []
    heading_lines = {line for h in document.headings for line in range(h.first_line, h.last_line + 1)}
    verbatim = document.verbatim_lines

    def close() -> None:
        body = "\n".join(collected).strip()
        if current and current[0] not in found and body:
            found[current[0]] = Section(current[0], current[1], body)

    for number, line in enumerate(document.lines):
        if number in heading_lines:
            close()
            current, collected = None, []
            continue
        label = None if number in verbatim else _label(line)
        kind = section_kind(label[0]) if label else None
        if label and kind:
            close()
            current, collected = (kind, label[0]), [label[1]]
        elif label and current:
            close()  # another label ("**影响**：...", a field line) ends the section
            current, collected = None, []
        elif current:
            collected.append(line)
    close()
    return found


def answer_lead(text: str) -> str:
    """The part of an answer that states its main finding: the root-cause section, else the
    conclusion, each with its title; else the first paragraph (or list item) with the heading
    above it. "" for an answer without prose (only code, say)."""
    document = markdown_read(text)
    sections = answer_sections(text, document=document)
    for kind in (SectionKind.ROOT_CAUSE, SectionKind.CONCLUSION):
        if kind in sections:
            return f"{sections[kind].title}\n{sections[kind].body}"
    title = ""
    for block in document.blocks:
        if block.kind is BlockKind.HEADING:
            title = block.text.strip()
        elif block.kind in (BlockKind.PARAGRAPH, BlockKind.ITEM) and block.text.strip():
            return f"{title}\n{block.text.strip()}".strip()
    return ""
