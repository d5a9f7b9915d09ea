"""Words, the one home for them: normalisation, segmentation, lemmas, tokens, negation, context.

Normalisation is what the gatekeeper compares on: Unicode NFKC (which also folds full-width
forms to their ASCII width), whitespace runs collapsed to one space, spaces that touch a CJK
character dropped (Chinese does not separate words, agents insert spaces at random), casefold.

Chinese is segmented with jieba, never character by character; English words are lemmatised
with simplemma. Both are set up here once, lazily, under one lock (jieba's dictionary takes about
half a second to load and neither library builds its data thread-safely), with jieba's logging
silenced: the judge, the AIOps checks, case extraction and evolution all segment through
`segment` / `tokens` and lemmatise through `lemma`. Markdown is read in `core/markdown.py`.

Pure Python: no Django.
"""

import logging
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

_CJK_CLASS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CLASS}]")
_SPACES = re.compile(r"\s+")
_SPACE_NEAR_CJK = re.compile(f"(?<=[{_CJK_CLASS}]) | (?=[{_CJK_CLASS}])")
# ASCII words keep their inner hyphens, dots and apostrophes (order-service, 10.0.0.1, isn't);
# CJK runs go to jieba.
_TOKEN_RUN = re.compile(rf"[A-Za-z0-9%]+(?:[-_.'][A-Za-z0-9%]+)*|[{_CJK_CLASS}]+")

NEGATIONS_EN = frozenset(
    {"not", "no", "never", "none", "without", "nothing", "neither", "nor", "cannot", "can't", "isn't", "aren't",
     "wasn't", "weren't", "doesn't", "don't", "didn't", "hasn't", "haven't", "won't", "couldn't", "unable"}
)  # fmt: skip
NEGATIONS_ZH = frozenset(
    {"不", "未", "没", "没有", "无", "非", "并未", "从未", "并非", "不是", "未能", "无法", "未见", "别", "否"}
)
# jieba keeps some negated words whole; these are split into the negation and the negated word.
_NEGATED_COMPOUNDS = {"不存在": "存在", "未发现": "发现", "没发现": "发现", "不可用": "可用", "无异常": "异常"}

STOPWORDS = frozenset(
    {
        # English function words and connectives: they carry no evidence.
        "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "of", "to", "in", "on", "at", "for",
        "and", "or", "by", "with", "from", "that", "this", "these", "those", "it", "its", "as", "has", "have",
        "had", "do", "does", "did", "which", "when", "while", "then", "than", "so", "because", "due", "caused",
        "causes", "cause", "led", "leads", "after", "before", "there", "their", "into", "also", "very", "all",
        "any", "some", "we", "our", "related", "can", "will", "would", "should", "may", "might", "us", "such", "via",
        # Chinese particles and connectives.
        "的", "了", "是", "在", "和", "与", "及", "或", "被", "把", "将", "对", "中", "时", "当", "由于", "因为",
        "导致", "所以", "也", "都", "而", "这", "那", "其", "个", "一个", "该", "并", "于", "为", "从", "到", "已",
        "已经", "就", "则", "且", "等", "会", "有", "着", "过", "之", "以", "造成", "引起", "出现", "发生", "后", "任何",
        "相关", "所有",
    }
)  # fmt: skip

# One lock for the set-up of both libraries.
_setup_lock = threading.Lock()
_jieba = None
_simplemma = None


def jieba_segmenter():
    """jieba's default tokenizer, initialised once (its dictionary load takes ~0.5 s)."""
    global _jieba
    if _jieba is None:
        with _setup_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                logging.getLogger("jieba").setLevel(logging.WARNING)
                jieba.initialize()
                # Keep "发现" and "异常" apart so "未发现异常" negates "发现", as in "没有发现异常".
                jieba.del_word("发现异常")
                _jieba = jieba
    return _jieba


def _lemmatiser():
    """simplemma with its English data loaded, once."""
    global _simplemma
    if _simplemma is None:
        with _setup_lock:
            if _simplemma is None:
                import simplemma

                simplemma.lemmatize("loaded", lang="en")
                _simplemma = simplemma
    return _simplemma


def segment(text: str) -> list[str]:
    """`text` cut into words by the shared jieba segmenter, every character kept, in order
    (`"".join(segment(text)) == text`)."""
    return jieba_segmenter().lcut(text or "", HMM=True)


@lru_cache(maxsize=4096)
def lemma(word: str) -> str:
    """The English lemma of a word, case-folded (`timed` -> `time`); other words unchanged."""
    if not word.isascii() or not word.isalpha():
        return word
    return _lemmatiser().lemmatize(word, lang="en").casefold()


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))


def detect_language(text: str) -> str:
    """'zh' when the text contains Chinese characters, else 'en' (a session's language, from its query)."""
    return "zh" if has_cjk(text) else "en"


def normalise(text: str) -> str:
    """NFKC + width folding, whitespace collapsed, spaces next to CJK dropped, casefolded."""
    text = unicodedata.normalize("NFKC", text or "")
    text = _SPACES.sub(" ", text).strip()
    text = _SPACE_NEAR_CJK.sub("", text)
    return text.casefold()


def compact(text: str) -> str:
    """Normalised text without spaces, hyphens and underscores: `Order Service` == `order-service`."""
    return re.sub(r"[\s\-_]+", "", normalise(text))


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for match in _TOKEN_RUN.finditer(normalise(text)):
        run = match.group()
        if _CJK.match(run):
            for word in jieba_segmenter().lcut(run, HMM=True):
                compound = _NEGATED_COMPOUNDS.get(word)
                if compound is None:
                    out.append(word)
                else:
                    out.extend((word[: len(word) - len(compound)], compound))
        else:
            out.append(run)
    return tuple(out)


def tokens(text: str) -> list[str]:
    """Normalised word tokens in order (punctuation dropped); Chinese runs segmented by jieba."""
    return list(_tokens(text or ""))


# Word runs of normalised text for `phrase_counts`: letters and digits, a kebab-case name whole
# (auth-db is a name, not the word "db"), split at dots and underscores (java.lang.OutOfMemoryError,
# max_connections); CJK runs go to jieba.
_WORD_RUN = re.compile(rf"[a-z0-9%]+(?:-[a-z0-9%]+)*|[{_CJK_CLASS}]+")


def _word_bounds(text: str) -> set[int]:
    bounds: set[int] = set()
    for match in _WORD_RUN.finditer(text):
        at = match.start()
        bounds.add(at)
        if _CJK.match(match.group()):
            for word in segment(match.group()):
                at += len(word)
                bounds.add(at)
        bounds.add(match.end())
    return bounds


@lru_cache(maxsize=64)
def _normalised(phrases: frozenset[str]) -> frozenset[str]:
    return frozenset(normalise(phrase) for phrase in phrases) - {""}


def phrase_counts(text: str, phrases: Iterable[str]) -> Counter[str]:
    """How often each phrase occurs in `text` as whole words, both normalised: an occurrence
    counts when it starts and ends on a word boundary (jieba's words in Chinese, runs of letters
    and digits elsewhere, a kebab-case name whole) and lies inside no longer phrase's occurrence,
    so 存储 counts in 对象存储 but 存 does not, 负载均衡 counts once and not also as 负载,
    `outofmemoryerror` counts in java.lang.OutOfMemoryError and `db` does not in auth-db."""
    text = normalise(text)
    bounds = _word_bounds(text) if text else set()
    found: list[tuple[int, int, str]] = []
    for phrase in _normalised(frozenset(phrases)):
        at = text.find(phrase)
        while at >= 0:
            if at in bounds and at + len(phrase) in bounds:
                found.append((at, at + len(phrase), phrase))
            at = text.find(phrase, at + 1)
    taken = bytearray(len(text))
    counts: Counter[str] = Counter()
    for start, end, phrase in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
        if not any(taken[start:end]):
            taken[start:end] = b"\x01" * (end - start)
            counts[phrase] += 1
    return counts


def is_negation(token: str) -> bool:
    return token in NEGATIONS_EN or token in NEGATIONS_ZH


def content_tokens(toks: Iterable[str]) -> list[str]:
    return [t for t in toks if t not in STOPWORDS and not is_negation(t)]


# A preposition or contrast word ends what a negation governs: in "evicted no keys during the
# incident" the negation is about the keys, not about "during" or the incident.
_SCOPE_END = frozenset(
    {"during", "since", "over", "within", "until", "across", "per", "through", "between", "while", "but",
     "although", "though", "however", "但", "但是", "而是", "期间"}
)  # fmt: skip
_CLAUSE = re.compile(r"[,，;；:：。.!?！？、\n]+(?:\s|$)|[，；：。！？、\n]")


def negated_terms(text: str, scope: int = 2) -> set[str]:
    """Content words governed by a negation: up to `scope` content tokens after it, same clause."""
    negated: set[str] = set()
    for clause in _CLAUSE.split(text or ""):
        toks = tokens(clause)
        for i, token in enumerate(toks):
            if not is_negation(token):
                continue
            taken = 0
            for following in toks[i + 1 :]:
                if is_negation(following) or following in _SCOPE_END:
                    break
                if following in STOPWORDS:
                    continue
                negated.add(following)
                taken += 1
                if taken >= scope:
                    break
    return negated


# Zero quantities. "evicted_keys stayed at 0", "重启次数为 0", "0 errors", "depth: zero" state that
# an activity did not happen: the metric word next to the zero is read as negated, so a claim
# that affirms the activity ("Redis was evicting keys") is contradicted, as by "no keys evicted".
_ZERO = frozenset({"0", "0.0", "0%", "zero", "零", "0次", "0个", "0条"})
# Words between a metric and its zero value ("X stayed at 0", "X 为 0"): skipped, never negated.
_ZERO_LINKS = frozenset(
    {"stayed", "stays", "remained", "remains", "was", "were", "is", "are", "at", "of", "to", "equals", "equal",
     "reported", "showed", "shows", "count", "total", "number", "为", "是", "保持", "维持", "仍", "仍为", "一直",
     "均", "均为", "都", "等于", "次数", "数", "数量", "个数", "总数", "计数", "值"}
)  # fmt: skip
# Words after a zero that are not what is counted ("stayed at 0 during the incident").
_NOT_COUNTED = frozenset(
    {"during", "in", "on", "at", "for", "since", "over", "across", "within", "after", "before", "until", "per",
     "from", "and", "or", "while", "between", "through"}
)  # fmt: skip
# Measure words that name the count, not the activity: the word before them is negated too.
_MEASURES = frozenset({"count", "total", "number", "次数", "数", "数量", "个数", "总数", "计数"})


_HAS_ZERO = re.compile(r"(?<![\d.,:])0(?:\.0+)?(?![\d.,:]\d|\d)|zero|零", re.IGNORECASE)
_ZERO_PHRASE = re.compile(r"[,，;；。!?！？、\n]|\.(?=\s|$)")


def _unlinked(token: str) -> str:
    # jieba glues the copula to a measure word ("错误数为 0" -> 错误 / 数为): "数为" reads as "数".
    if len(token) > 1 and token[-1] in "为是" and _CJK.match(token):
        return token[:-1]
    return token


def zeroed_terms(text: str) -> set[str]:
    """Activity words the text gives a zero quantity (metric names split on `_` and `-`)."""
    zeroed: set[str] = set()
    if not _HAS_ZERO.search(text or ""):
        return zeroed  # most evidence has no zero at all: skip the second tokenisation
    # Any comma ends the phrase here: in "重启次数为0,内存使用率40%" the zero is not about memory.
    for clause in _ZERO_PHRASE.split(text or ""):
        toks = [_unlinked(t) for t in tokens(clause)]
        for i, token in enumerate(toks):
            if token not in _ZERO:
                continue
            after = toks[i + 1] if i + 1 < len(toks) else ""
            if after and after not in _NOT_COUNTED and after not in STOPWORDS and not after[0].isdigit():
                # "0 errors": what follows is what was counted.
                zeroed.add(after)
                continue
            j = i - 1
            while j >= 0 and toks[j] in _ZERO_LINKS:
                if toks[j] in _MEASURES and j > 0:
                    zeroed.add(toks[j - 1])  # "重启次数为 0": 重启
                j -= 1
            if j >= 0 and not toks[j][0].isdigit() and toks[j] not in STOPWORDS:
                zeroed.add(toks[j])
    parts = {part for word in zeroed for part in re.split(r"[_\-]+", word) if part and part not in STOPWORDS}
    return zeroed | parts


# Causal language. A claim that one thing caused another needs evidence that states the link;
# two facts side by side ("flag enabled at 11:02", "latency rose at 11:05") are correlation.
_CAUSAL_CLAIM = re.compile(
    r"\b(?:caus(?:e|ed|es|ing)|because|due to|owing to|led to|leads? to|leading to|result(?:ed|s)? in|as a result"
    r"|triggered|triggers|responsible for|root cause|attributable to)\b"
    r"|导致|因为|由于|造成|引起|引发|所致|致使|使得|触发|根因|归因",
    re.IGNORECASE,
)
# In evidence a little more counts: "因磁盘写满" (因 alone), "therefore", "hence", "原因", and the
# log grammar "<failed verb>: <reason>" ("PUT denied: QuotaExceeded", "失败：连接被拒绝"), where
# the log line itself names the reason of the failure.
_CAUSAL_EVIDENCE = re.compile(
    _CAUSAL_CLAIM.pattern + r"|\b(?:therefore|hence|thus|consequently|so that|which (?:made|broke|blocked))\b"
    r"|\b(?:reason|denied|failed|rejected|refused|aborted|killed|terminated|evicted)\s*[:=(]"
    r"|因|所以|因此|故而|从而|以致|进而|(?:失败|拒绝|终止|中止)\s*[:：(（]",
    re.IGNORECASE,
)


def is_causal(text: str) -> bool:
    """Does the claim assert a cause (caused, because, due to, 导致, 因为, 由于, ...)?"""
    return bool(_CAUSAL_CLAIM.search(normalise(text)))


def states_causal_link(text: str) -> bool:
    """Does the evidence state a causal link at all (the claim's own markers, 因, therefore, ...)?"""
    return bool(_CAUSAL_EVIDENCE.search(normalise(text)))


def json_sorted_keys(value: Any) -> Any:
    """A JSON value normalised: a copy with every object's keys in sorted order, so what PostgreSQL's
    jsonb, an export or another client may reorder reads the same whatever order it came in."""
    if isinstance(value, dict):
        return {key: json_sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [json_sorted_keys(item) for item in value]
    return value
