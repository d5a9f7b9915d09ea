"""Markdown answers read by the one parser: blocks, the outline, sections and the lead."""

from collections import Counter

import pytest

from core.markdown import (
    BlockKind,
    Section,
    SectionKind,
    answer_lead,
    answer_sections,
    markdown_outline,
    markdown_read,
    section_kind,
)

ANSWERS = [
    "",
    "just text",
    "Title\n=====\n\nintro **bold** `code` [link](https://x.test)\nsecond line\n\n> quoted\n\n1. one\n2. two\n   - nested\n",
    "# 根因\n\n- a\n\n- b\n\n  loose paragraph\n\n```py\n# not a heading\n```\n\n<div>\nhtml\n</div>\n\n---\n\nlast",
    "C# and well-known\n\n    indented code\n\n## 修复方案\n1. 扩容\n2. 重启\n",
]


def test_blocks_carry_their_lines_and_text():
    document = markdown_read("# Root cause\n\npool **exhausted**\nat 10:05\n\n```\n# code\n```\n- a\n  - b\n")

    assert [(b.kind, b.first_line, b.last_line, b.depth, b.text) for b in document.blocks] == [
        (BlockKind.HEADING, 0, 0, 0, "Root cause"),
        (BlockKind.PARAGRAPH, 2, 3, 0, "pool exhausted\nat 10:05"),
        (BlockKind.CODE, 5, 7, 0, "# code\n"),
        (BlockKind.LIST, 8, 9, 0, ""),
        (BlockKind.ITEM, 8, 9, 0, "a"),
        (BlockKind.LIST, 9, 9, 1, ""),
        (BlockKind.ITEM, 9, 9, 1, "b"),
    ]
    assert document.verbatim_lines == {5, 6, 7}


def test_lines_count_characters_not_bytes_and_any_line_ending():
    document = markdown_read("中文段落\r\n\r\n## 标题\r\n正文")

    assert [(b.kind, b.first_line) for b in document.blocks] == [
        (BlockKind.PARAGRAPH, 0),
        (BlockKind.HEADING, 2),
        (BlockKind.PARAGRAPH, 3),
    ]


@pytest.mark.parametrize("text", ANSWERS)
def test_the_outline_counts_what_the_blocks_are(text):
    blocks = markdown_read(text).blocks
    kinds = Counter(b.kind for b in blocks)
    texts = [b.text for b in blocks if b.kind in (BlockKind.HEADING, BlockKind.PARAGRAPH, BlockKind.ITEM) and b.text]

    outline = markdown_outline(text)

    assert (outline.headings, outline.lists, outline.list_items, outline.code_blocks) == (
        kinds[BlockKind.HEADING],
        kinds[BlockKind.LIST],
        kinds[BlockKind.ITEM],
        kinds[BlockKind.CODE],
    )
    assert outline.paragraphs == sum(b.kind is BlockKind.PARAGRAPH and not b.depth for b in blocks)
    assert (outline.text_chars, outline.text_blocks) == (sum(map(len, texts)), len(texts))


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("Root cause", SectionKind.ROOT_CAUSE),
        ("1. 根因分析", SectionKind.ROOT_CAUSE),
        ("**原因**", SectionKind.ROOT_CAUSE),
        ("Summary", SectionKind.CONCLUSION),
        ("结论", SectionKind.CONCLUSION),
        ("二、处理建议", SectionKind.SOLUTION),
        ("解决", SectionKind.SOLUTION),
        ("Actions", SectionKind.SOLUTION),
        ("Next steps", SectionKind.SOLUTION),
        ("影响", None),
        ("10", None),
        ("", None),
    ],
)
def test_section_kinds(title, kind):
    assert section_kind(title) == kind


def test_heading_sections_end_at_the_next_heading_or_field_line():
    answer = (
        "Summary line\n\n## Root cause\nPool exhausted.\n\n## Fix\n- raise pool\n- add alert\n\n"
        "**Error code**: `E1040`  **Service**: order-service\n"
    )

    assert answer_sections(answer) == {
        SectionKind.ROOT_CAUSE: Section(SectionKind.ROOT_CAUSE, "Root cause", "Pool exhausted."),
        SectionKind.SOLUTION: Section(SectionKind.SOLUTION, "Fix", "- raise pool\n- add alert"),
    }


def test_label_lines_inside_code_are_code():
    answer = "Intro about order-service.\n\n```\n根因：log-agent DiskFull\n```\n\n**处理**：扩容连接池"

    assert answer_sections(answer) == {SectionKind.SOLUTION: Section(SectionKind.SOLUTION, "处理", "扩容连接池")}


def test_a_url_or_a_time_is_not_a_label():
    answer = "**解决**：\n1. 扩容连接池\n10:05 再观察\nhttps://wiki.example/runbook\n2. 重启"

    assert answer_sections(answer)[SectionKind.SOLUTION].body == (
        "1. 扩容连接池\n10:05 再观察\nhttps://wiki.example/runbook\n2. 重启"
    )


def test_the_lead_is_the_root_cause_section_under_a_heading():
    answer = "# Incident\nSummary line about log-agent.\n## 根因分析\norder-service 连接池耗尽\n## 修复\n扩容"

    assert answer_lead(answer) == "根因分析\norder-service 连接池耗尽"


def test_the_lead_is_the_label_line_section_not_the_intro():
    answer = "本次告警涉及 order-service。\n\n**根因**：log-agent 节点 DiskFull，日志写入阻塞。\n**建议**：清理磁盘"

    assert answer_lead(answer) == "根因\nlog-agent 节点 DiskFull，日志写入阻塞。"


def test_the_lead_is_never_code():
    answer = "```\n# Root cause check\nkubectl get pods\n```\n\nThe order-service pool is exhausted."

    assert answer_lead(answer) == "The order-service pool is exhausted."
    assert answer_lead("```\nonly code\n```") == ""


def test_without_sections_the_lead_is_the_first_paragraph_under_its_heading():
    assert answer_lead("# 诊断报告\n\n连接池耗尽。\n\n其他说明。") == "诊断报告\n连接池耗尽。"
