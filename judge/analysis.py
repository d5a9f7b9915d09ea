"""One text read once into clauses of typed tokens: what the alignment and the structure checks use.

Steps, on `text.normalise`d text (NFKC, width, case):
1. Chinese numerals before a unit or counter become digits (cn2an: 三次 -> 3次, 两百毫秒 -> 200毫秒);
   English number words two..twenty, once and twice too.
2. Sentences end at 。！？!?;； newlines and ". "; clauses end at commas (not inside 1,284).
3. Values (numbers with units, codes, identifiers, IPs, times, quoted text) come from
   `facts.fact_spans`; the rest is cut into words: jieba with part-of-speech tags for Chinese
   (function-word tags dropped), simplemma lemmas for English, snake_case names split.
4. Negation scope (scope.py): what a negator or a zero value governs, failed searches.
5. Per clause: its entities (identifiers, or those of the clause before when it names none),
   hedges, quantifier words (all / most / some / few / none), from -> to pairs, and (context.py)
   the sentence's mood and the clause's frequency.

`analyse` is cached by text: evidence is read once per ref context, whatever the claims.
"""

import re
from functools import lru_cache

import cn2an

from core.text import jieba_segmenter, lemma, normalise

from . import cues
from . import glossary as g
from .clauses import Analysis, Clause, Token
from .context import moods, period
from .facts import Fact, fact_spans
from .scope import scope

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_SENTENCES = re.compile(r"(?:[。！？!?;；\n]|\.(?=\s|$))+")
_CLAUSES = re.compile(r"，|,(?=\s)|(?<!\d),|,(?!\d)")
_RUN = re.compile(rf"[a-z0-9%']+(?:[-_.'][a-z0-9%]+)*|[{_CJK}]+|->|→|=>|~")
_ZH_NUMERAL = re.compile(
    r"(百分之)?([零一二两三四五六七八九十百千万]+)(?!分之)(?=(?:个|次|条|台|倍|核|项|笔|人|秒|毫秒|分钟|分|小时"
    r"|天|周|月|年|米|公里|平方公里|千米|副本|节点|实例|倍|%|ms|s|gb|mb))"
)
_PERCENT_ZH = re.compile(r"百分之\s*([零一二两三四五六七八九十百点]+|\d+(?:\.\d+)?)")
_EN_NUMBERS = {
    w: str(n)
    for n, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
    if n >= 2
}
_EN_NUMBER = re.compile(r"\b(" + "|".join(_EN_NUMBERS) + r"|once|twice|thrice)\b")
# "once" counts when a period, a place or time in the event, or the end of the clause follows it
# ("once a day", "failed once at 02:00", "restarted once."), or "only" / "exactly" comes before.
_ONCE_COUNT = re.compile(
    r"\s*(?:$|[.,;:!?)]|(?:a|an|per|every|each)\s+(?:second|minute|hour|day|night|week|month|quarter|year)s?\b"
    r"|(?:at|in|on|during|since|before|after|more|or|and|again|this|last|today|yesterday|so far|in total)\b)"
)
_COUNT_BEFORE = re.compile(r"\b(?:only|just|exactly|than|least|most)\s+$")
_BE = frozenset({"is", "are", "was", "were", "be", "been", "being", "get", "got", "gets"})
_US = re.compile(r"(?<![A-Za-z.\-_])U\.?S\.?(?![A-Za-z0-9\-_])")
_THE_US = re.compile(r"\bthe us\b(?![\-_])")
_FRACTION = re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")  # "0/6 instances healthy"
_FROM = frozenset({"from", "从", "由"})
_TO = frozenset({"to", "into", "为", "到", "至", "成", "->", "→", "=>"})


def _cn_number(text: str) -> float | None:
    """cn2an's reading of a Chinese numeral, or None for what it cannot read (百分之二三十, 点五, 百)."""
    try:
        number = cn2an.cn2an(text, "smart")
    except (ValueError, TypeError, KeyError, IndexError):
        return None
    return float(number) if isinstance(number, int | float) else None


def _digits(number: float) -> str:
    return str(int(number)) if number.is_integer() else f"{number:.6f}".rstrip("0")


def _zh_numerals(text: str) -> str:
    def convert(match: re.Match[str]) -> str:
        number = _cn_number(match[2])
        if number is None:
            return match.group()
        return _digits(number) + ("%" if match[1] else "")

    def percent(match: re.Match[str]) -> str:
        raw = match[1]
        # 百分之百 is one hundred, 百分之点五 half a percent: cn2an wants the leading 一 / 零.
        raw = "一" + raw if raw[0] in "百千" else "零" + raw if raw[0] == "点" else raw
        number = float(raw) if raw[0].isdigit() else _cn_number(raw)
        return match.group() if number is None else f"{_digits(number)}%"

    return _ZH_NUMERAL.sub(convert, _PERCENT_ZH.sub(percent, text))


def _en_numbers(text: str) -> str:
    def convert(match: re.Match[str]) -> str:
        word = match[1]
        if (
            word == "once"
            and not _ONCE_COUNT.match(text, match.end())
            and not _COUNT_BEFORE.search(text, 0, match.start())
        ):
            return word  # "was once a factory", "once the storm passed": formerly, when
        return {"once": "1 time", "twice": "2 times", "thrice": "3 times"}.get(word) or _EN_NUMBERS[word]

    return _EN_NUMBER.sub(convert, text)


def prepare(text: str) -> str:
    """Normalised text with numerals as digits: what every offset of an Analysis refers to. "US"
    (or, once case-folded, "the us") is the country, not the pronoun."""
    return _en_numbers(_zh_numerals(_THE_US.sub("the usa", normalise(_US.sub("USA", text)))))


def warm_up() -> None:
    """Load jieba's dictionary and simplemma's English data now rather than on the first claim."""
    analyse("预热 warm-up requests")


@lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """The clauses of `text` (see the module docstring); cached."""
    work = prepare(text)
    clauses: list[Clause] = []
    entities: frozenset[Fact] = frozenset()
    key = hash(work)
    for number, (sentence, question) in enumerate(_sentences(work)):
        first = len(clauses)
        for part in _CLAUSES.split(sentence):
            if not part.strip():
                continue
            clause = _clause(len(clauses), (key, number), part.strip())
            own = frozenset(t.fact for t in clause.tokens if t.identifier)
            entities = own or entities
            clause.entities = entities
            clauses.append(clause)
        siblings = tuple(clauses[first:])
        flat = tuple(t for clause in siblings for t in clause.tokens)
        for clause in siblings:
            clause.siblings, clause.flat = siblings, flat
        moods(siblings, question=question)
    return Analysis(work, tuple(clauses))


def _sentences(work: str) -> list[tuple[str, bool]]:
    """The sentences of `work`, each with whether it asks ("Is the server down?", "服务恢复了吗？")."""
    out, start = [], 0
    for match in _SENTENCES.finditer(work):
        out.append((work[start : match.start()], "?" in match.group()))
        start = match.end()
    out.append((work[start:], False))
    return [(text, asked or text.rstrip().endswith(("吗", "么"))) for text, asked in out if text.strip()]


def _clause(index: int, sentence: tuple[int, int], text: str) -> Clause:
    tokens: list[Token] = []
    cursor = 0
    for start, end, fact in sorted(fact_spans(text), key=lambda s: (s[0], -s[1])):
        if start < cursor:
            continue  # a span inside one already taken
        tokens.extend(_words(text[cursor:start]))
        tokens.append(Token(fact.text, fact.text, "value", fact=fact))
        if fact.kind == "quoted":
            cursor = start + 1  # the quoted words are read too
            continue
        counted = fact.family[6:] if fact.family.startswith("count:") else ""
        if counted.isascii() and counted.isalpha() and len(counted) >= 3:
            tokens.append(Token(counted, lemma(counted), "word"))  # "0 errors": errors is a word too
        cursor = end
    tokens.extend(_words(text[cursor:]))
    _reporting(tokens)
    _merge_phrases(tokens)
    fractions = [(float(a), float(b)) for a, b in _FRACTION.findall(text)]
    scope(tokens, fractions)
    lemmas = {t.lemma for t in tokens}
    quantifier = ""
    if any(a == 0 for a, _ in fractions) or lemmas & g.NONE_QUANTIFIERS:
        quantifier = "none"
    elif any(a == b for a, b in fractions) or lemmas & g.UNIVERSAL:
        quantifier = "all"
    elif (
        lemmas & cues.MOST
        or any(t.text == "most" and n + 1 < len(tokens) and tokens[n + 1].text == "of" for n, t in enumerate(tokens))
        or (tokens and tokens[0].text == "most")
    ):
        quantifier = "most"
    elif lemmas & cues.FEW:
        quantifier = "few"
    elif fractions or lemmas & g.PARTIAL:
        quantifier = "some"
    hedged = _hedged(tokens, text)
    return Clause(
        index, sentence, text, tokens, hedged=hedged, quantifier=quantifier, pairs=_pairs(tokens), period=period(text)
    )


def _words(chunk: str) -> list[Token]:
    out: list[Token] = []
    for match in _RUN.finditer(chunk):
        run = match.group()
        if run in {"->", "→", "=>", "~"}:
            out.append(Token(run, run, "light"))
            continue
        if run[0] >= "\u3400":
            out.extend(_chinese(run))
            continue
        if any(c.isdigit() for c in run):
            parts = [run]
        else:  # "node's" is node, "read-only" and "read_only" are read, only
            parts = [p for p in re.split(r"[-_]", re.sub(r"'s$|s'$", "", run)) if p]
        for part in parts:
            if part.endswith("n't"):
                out.append(Token(part, part, "neg"))
                continue
            base = lemma(part)
            if part in g.NEGATORS_EN:
                kind = "neg"
            elif part in g.LIGHT_EN or base in g.LIGHT_EN:
                kind = "light"
            else:
                kind = "word"
            out.append(Token(part, base, kind))
    # "failed to connect", "unable to", "refused to", "rather than", "instead of": what follows is denied.
    for i, token in enumerate(out[:-1]):
        refused = (
            token.lemma in {"refuse", "decline"}
            and i + 2 < len(out)
            and out[i + 2].kind == "word"
            and out[i + 2].text == out[i + 2].lemma  # "refused to resign", not "refused to redis-cache"
        )
        if (
            (token.lemma in {"fail", "unable"} and out[i + 1].text == "to")
            or (refused and out[i + 1].text == "to")
            or ((token.text, out[i + 1].text) in cues.CONTRAST_NEGATORS)
        ):
            out.insert(i + 2 if token.text in {"rather", "instead"} else i + 1, Token("not", "not", "neg"))
            break
    # "could not", "may not": a modal before a negation is no hedge.
    return out


_VALUE_LINKS = frozenset({"at", "from", "to", "around", "about", "up", "down", "over", "under", "above", "below"})
_LIKE_SUBJECTS = frozenset({"i", "you", "we", "they", "he", "she", "people", "not", "don't", "doesn't", "didn't",
                            "also", "really", "would"})  # fmt: skip


def _reporting(out: list[Token]) -> None:
    """A reporting verb that reports ("logs show that", "we observed", "metrics indicate") is a
    function word; so is a verb whose object is a value ("reached 12000", "went from 850 ms to
    320 ms", "held 12,400 messages": the value is the claim); "like" after its subject ("she
    likes dogs") is a verb, elsewhere a preposition."""
    for i, token in enumerate(out):
        if token.kind == "word" and token.lemma in g.VALUE_VERBS:
            nxt = next((t for t in out[i + 1 : i + 4] if t.kind != "light" and t.text not in _VALUE_LINKS), None)
            if nxt is not None and nxt.kind == "value":
                token.kind = "light"
                continue
        prev = next((t for t in reversed(out[:i]) if t.kind != "light" or t.text in _LIKE_SUBJECTS), None)
        if token.kind == "word" and token.lemma in g.REPORTING:
            nxt = out[i + 1].text if i + 1 < len(out) else ""
            if nxt == "that" or prev is None or prev.lemma in g.REPORTERS or prev.text in g.REPORTERS:
                token.kind = "light"
        elif (
            token.lemma == "like"
            and token.kind == "word"
            and token.text not in {"likes", "liked"}
            and not (prev is not None and prev.text in _LIKE_SUBJECTS)
        ):
            token.kind = "light"


@lru_cache(maxsize=1)
def _posseg():
    import jieba.posseg

    segmenter = jieba_segmenter()  # the shared dictionary, loaded once
    for word, tag in cues.ZH_WORDS.items():
        segmenter.add_word(word, tag=tag)

    return jieba.posseg


def _words_of(run: str) -> list[tuple[str, str]]:
    """jieba's words of a Chinese run, a run of single characters it could not place joined into
    one word (高 / 达 -> 高达, 运 / 维 -> 运维): a unit is a word, never a character of one."""
    out: list[tuple[str, str]] = []
    single: list[tuple[str, str]] = []

    def flush() -> None:
        if len(single) > 1:
            out.append(("".join(w for w, _ in single), single[-1][1]))
        else:
            out.extend(single)
        single.clear()

    for pair in _posseg().lcut(run, HMM=False):
        word, flag = pair.word, pair.flag
        loose = len(word) == 1 and word >= "\u3400" and word not in g.LIGHT_ZH and word not in g.NEGATORS_ZH
        if not loose:
            flush()
            out.append((word, flag))
        else:
            single.append((word, flag))
    flush()
    return out


def _chinese(run: str) -> list[Token]:
    out: list[Token] = []
    for word, flag in _words_of(run):
        for piece in _split_negation(word):
            if piece in g.NEGATORS_ZH:
                out.append(Token(piece, piece, "neg", pos=flag))
            elif piece in g.LIGHT_ZH or (flag in g.LIGHT_POS and piece not in g.SYNONYM_GROUPS):
                out.append(Token(piece, piece, "light", pos=flag))
            else:
                out.append(Token(piece, piece, "word", pos=flag))
    return out


@lru_cache(maxsize=4096)
def _split_negation(word: str) -> tuple[str, ...]:
    """jieba keeps some negations glued: 未发现 -> 未 发现, 中未 -> 中 未, 不可用 -> 不 可用."""
    if word in g.NEGATORS_ZH or word in g.NOT_NEGATIONS_ZH or len(word) < 2:
        return (word,)
    for negator in sorted(g.NEGATORS_ZH, key=len, reverse=True):
        at = word.find(negator)
        if at < 0 or (at > 0 and at > 1):
            continue
        rest = word[at + len(negator) :]
        return tuple(p for p in (word[:at], negator, rest) if p)
    return (word,)


def _merge_phrases(tokens: list[Token]) -> None:
    """Glossary phrases of two or three English words become one token ("scale out", "error rate")."""
    i = 0
    while i < len(tokens) - 1:
        for size in (3, 2):
            window = tokens[i : i + size]
            if len(window) < size or any(t.kind not in {"word", "light"} for t in window):
                continue
            ascii_words = all(t.lemma.isascii() for t in window)
            if not ascii_words and not all(t.text >= "\u3400" and t.kind == "word" for t in window):
                continue
            phrase = (" " if ascii_words else "").join(t.lemma for t in window)
            if phrase in g.SYNONYM_GROUPS or phrase in g.ANTONYM_OF:
                tokens[i : i + size] = [
                    Token((" " if ascii_words else "").join(t.text for t in window), phrase, "word")
                ]
                break
        i += 1


def _hedged(tokens: list[Token], text: str) -> bool:
    for i, token in enumerate(tokens):
        if token.lemma not in g.HEDGES:
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1] if i else None
        if token.lemma in {"may", "could", "might"} and (
            (nxt is not None and nxt.kind == "neg") or (prev is not None and prev.text in {"in", "of", "since"})
        ):
            continue  # "could not connect" is a negation; "in May" a month
        return True
    return any(h in text for h in g.HEDGES if not h.isascii() and len(h) > 1)


def _pairs(tokens: list[Token]) -> tuple[tuple[Token, Token], ...]:
    """from X to Y / 从 X 调整为 Y / 由 X 降至 Y / X -> Y, X and Y the nearest content tokens."""
    pairs = []
    for i, token in enumerate(tokens):
        if token.text in {"->", "→", "=>"}:
            left = next((t for t in reversed(tokens[:i]) if t.content), None)
            right = next((t for t in tokens[i + 1 :] if t.content), None)
            if left and right:
                pairs.append((left, right))
        elif token.text in _FROM:
            source = next((t for t in tokens[i + 1 : i + 3] if t.content), None)
            if source is None:
                continue
            rest = tokens[tokens.index(source) + 1 :]
            marker = next(
                (n for n, t in enumerate(rest[:6]) if t.text in _TO or t.text.endswith(("为", "到", "至"))), None
            )
            if marker is None:
                continue
            target = next((t for t in rest[marker + 1 : marker + 4] if t.content), None)
            if target is not None:
                pairs.append((source, target))
    return tuple(pairs)
