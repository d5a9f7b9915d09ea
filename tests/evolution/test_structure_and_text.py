"""Markdown structure comes from a CommonMark parser; lengths count 字; keywords come from jieba."""

import pytest

from evolution.services.quality import WEIGHTS, quality_score
from evolution.services.structure import STRUCTURE_CHARS, structure_parse
from evolution.services.text import MAX_KEYWORDS, char_length, keyword_coverage, query_keywords
from tests.evolution.samples import NEW_STUDY_ANSWER, STUDY_QUERY


@pytest.mark.parametrize(
    "text",
    [
        "I write C# and F# every day.\n\nIt is a well-known fact.",
        "#hashtag is not a heading without a space",
        "Prices rose 5-10 % - or so they say.",
        "a well-known\n-not a list because no space",
    ],
)
def test_hash_and_hyphen_inside_text_are_neither_headings_nor_lists(text):
    features = structure_parse(text=text)

    assert not features.has_headings
    assert not features.has_lists


def test_heading_list_paragraph_and_code_are_detected():
    text = "# Title\n\nFirst paragraph.\n\nSecond paragraph.\n\n- one\n- two\n\n1. first\n2. second\n\n```python\nx = 1\n```\n"

    features = structure_parse(text=text)

    assert (features.headings, features.lists, features.list_items, features.paragraphs) == (1, 2, 4, 2)
    assert features.code_blocks == 1
    assert features.score == 1.0


def test_markers_inside_code_blocks_are_code_not_structure():
    fenced = "```\n# not a heading\n- not a list\n```"
    indented = "Intro.\n\n    # still code\n    - still code\n"

    for text in (fenced, indented):
        features = structure_parse(text=text)
        assert features.has_code
        assert not features.has_headings and not features.has_lists


def test_tight_list_items_are_not_counted_as_paragraphs():
    features = structure_parse(text="Intro.\n\n- a\n- b\n- c\n")

    assert features.paragraphs == 1
    assert not features.has_paragraphs  # one paragraph is no paragraph separation


@pytest.mark.parametrize(
    ("text", "paragraphs"),
    [("- a\n\n- b\n\n- c", 0), ("1. a\n\n2. b\n\n3. c\n", 0), ("Intro.\n\n- a\n\n  more on a\n\n- b\n", 1)],
)
def test_loose_list_items_are_not_counted_as_paragraphs(text, paragraphs):
    # Issue 9, 3.6: a loose list's items hold visible paragraph tokens; they are list text.
    features = structure_parse(text=text)

    assert features.has_lists
    assert (features.paragraphs, features.has_paragraphs) == (paragraphs, False)


def test_paragraphs_around_a_loose_list_still_count():
    features = structure_parse(text="First.\n\n- a\n\n- b\n\nLast.\n\n> Quoted prose.")

    assert features.paragraphs == 3 and features.has_paragraphs


def test_setext_heading_counts_as_heading():
    assert structure_parse(text="Title\n=====\n\ntext").has_headings


def test_score_is_a_quarter_per_feature():
    assert structure_parse(text="").score == 0.0
    assert structure_parse(text="one\n\ntwo").score == 0.25
    assert structure_parse(text="# h\n\none\n\ntwo\n\n- a").score == 0.75


def test_length_counts_every_non_whitespace_character_once():
    assert char_length("注意力 abc\n\n  1。") == 8
    assert char_length(" \t\n") == 0


def test_query_keywords_come_from_jieba_without_stopwords():
    assert query_keywords(STUDY_QUERY) == ("提高", "学习", "注意力")
    assert query_keywords("How do I restart the order service?") == ("restart", "order", "service")


def test_keyword_coverage_reports_missing_words():
    coverage, missing = keyword_coverage(keywords=("提高", "学习", "注意力"), text="提高注意力的方法")

    assert coverage == pytest.approx(2 / 3)
    assert missing == ["学习"]


def test_overall_quality_is_weighted_30_40_30():
    scores = quality_score(query=STUDY_QUERY, response=NEW_STUDY_ANSWER)

    expected = round(
        WEIGHTS["completeness"] * scores.completeness
        + WEIGHTS["usefulness"] * scores.usefulness
        + WEIGHTS["clarity"] * scores.clarity,
        2,
    )
    assert WEIGHTS == {"completeness": 0.3, "usefulness": 0.4, "clarity": 0.3}
    assert scores.overall == expected
    assert all(0 <= value <= 10 for value in scores.scores().values())


def test_quality_rewards_keywords_examples_data_and_references():
    bare = quality_score(query=STUDY_QUERY, response="多休息。")
    rich = quality_score(
        query=STUDY_QUERY,
        response="提高学习注意力：例如每次专注 25 分钟，休息 5 分钟。研究表明有效，参考 https://example.org",
    )

    assert rich.completeness > bare.completeness
    assert rich.usefulness > bare.usefulness


# --- bounded work for the longest answers the API accepts (issue 12, 3) ----------------------


def test_structure_is_read_from_the_first_structure_chars_cut_at_a_line_break():
    prose = ("连接池耗尽时请求排队超时。" * 40 + "\n\n") * 60
    assert len(prose) > STRUCTURE_CHARS
    before = "# 根因\n\n" + prose + "```text\ncode after the bound\n```\n"

    features = structure_parse(text=before)

    assert features.has_headings and not features.has_code
    assert features.paragraphs == prose[: STRUCTURE_CHARS - len("# 根因\n\n")].count("\n\n")


def test_saturated_counts_score_as_the_full_counts_did():
    many = "建议 " * 50 + "例如 " * 50 + " ".join(str(n) for n in range(500)) + " https://a https://b https://c"
    few = "建议 " * 8 + "例如 " * 2 + "1 2 3 https://a https://b"

    assert quality_score(query="q", response=many).usefulness == quality_score(query="q", response=few).usefulness


def test_a_query_yields_at_most_max_keywords():
    query = " ".join(f"word{chr(97 + a)}{chr(97 + b)}" for a in range(26) for b in range(26))

    keywords = query_keywords(query)

    assert len(keywords) == MAX_KEYWORDS
    assert keywords[:2] == ("wordaa", "wordab")
