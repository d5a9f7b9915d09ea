"""Words: segmentation, lemmas and whole-word phrase counts, set up once for every caller."""

import threading

from core.text import lemma, phrase_counts, segment


def test_segmentation_keeps_every_character_in_order():
    text = "order-service 的数据库连接池耗尽，HTTP 503。"

    words = segment(text)

    assert "".join(words) == text
    assert "数据库" in words


def test_concurrent_first_use_sets_the_libraries_up_once():
    results: list[tuple[list[str], str]] = []
    threads = [
        threading.Thread(target=lambda: results.append((segment("连接池耗尽"), lemma("connections")))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 8
    assert len({(tuple(words), word) for words, word in results}) == 1
    assert results[0][1] == "connection"


def test_lemmas_of_english_words_only():
    assert (lemma("timed"), lemma("Pools"), lemma("连接"), lemma("503")) == ("time", "pool", "连接", "503")


def test_phrases_count_as_whole_words_longest_first():
    counts = phrase_counts(
        "对象存储写入失败; auth-db 连接池耗尽, 负载均衡 java.lang.OutOfMemoryError max_connections",
        ["存储", "存", "连接池", "连接", "负载", "负载均衡", "db", "outofmemoryerror", "max_connections"],
    )

    assert counts == {"存储": 1, "连接池": 1, "负载均衡": 1, "outofmemoryerror": 1, "max_connections": 1}


def test_phrases_of_several_words_match_across_spacing_and_case():
    assert phrase_counts("Connection   Refused twice: connection refused", ["connection refused"]) == {
        "connection refused": 2
    }
