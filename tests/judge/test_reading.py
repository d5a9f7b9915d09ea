"""What the judge reads: the excerpt's window in its ref, and the words of Chinese and English text."""

from judge.analysis import analyse
from judge.context import FUTURE
from judge.window import LIMIT, excerpt_find, ref_text, window


def cut(raw: str, excerpt: str) -> str:
    text = ref_text(raw)
    return window(text, *excerpt_find(excerpt, text))


def test_a_log_excerpt_is_read_with_the_line_before_and_after():
    log = "booting\n14:19 worker-1 started\n14:20 disk usage 91% (threshold 85%)\n14:21 cleanup done\n14:22 idle"

    assert (
        cut(log, "disk usage 91%") == "14:19 worker-1 started\n14:20 disk usage 91% (threshold 85%)\n14:21 cleanup done"
    )


def test_a_prose_excerpt_is_read_with_the_sentence_before_and_after():
    text = "First it rained. The pool filled up quickly. Then it stopped. Much later the sun came out."

    assert cut(text, "pool filled up") == "first it rained. the pool filled up quickly. then it stopped."


def test_the_window_is_bounded_by_the_excerpt_not_by_the_ref():
    text = "x" * 50_000 + ". the pool is full. " + "y" * 50_000

    assert len(cut(text, "the pool is full")) <= 2 * LIMIT + len("the pool is full") + 2


def test_an_excerpt_across_a_line_break_is_found():
    assert excerpt_find("disk usage 91%", ref_text("disk usage\n91%")) is not None


def words(text: str) -> list[str]:
    return [t.text for clause in analyse(text).clauses for t in clause.tokens if t.content]


def test_chinese_units_are_words_never_loose_characters():
    assert "运维" in words("运维将 worker 副本数从 3 调整为 6")
    assert not {"运", "维", "高", "达"} & set(words("运维说 payment-api 的 P99 延迟高达 2.4 秒"))


def test_jiang_before_its_object_marks_the_object_not_the_future():
    assert analyse("运维将 worker 副本数从 3 调整为 6").clauses[0].mood == ""
    assert analyse("证书将于明天过期").clauses[0].mood == FUTURE
    assert analyse("系统将在 3 天后过期").clauses[0].mood == FUTURE


def test_english_possessives_and_hyphens_are_normalised():
    assert words("The node's read-only disk") == ["node", "read", "only", "disk"]
