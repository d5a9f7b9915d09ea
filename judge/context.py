"""What a sentence does to the facts it holds: mood, frequency and rank.

- Mood: a sentence that states something only under a condition ("If the vote passes, the stadium
  will be built", "若磁盘使用率超过 90%，系统将自动扩容"), or as a plan, belief, expectation, the
  future or an instruction ("Officials expect it to open in 2026", "公司计划明年开设门店",
  "Runbook: restart the pods") does not state it as a fact. "When" / "当" make a condition in
  generic or future sentences only ("When it rained last night, the basement flooded" is a fact).
  "Whether X, Y" leaves only X open. Set on each clause by `analysis.analyse`.
- Frequency: "every 2 years", "twice a week", "daily", "每两年", "每天 ... 1 次" as a period in seconds.
- Rank: "the second largest", "the first woman", "the tallest", "第二大", "最大" as (head, rank).
A claim in the evidence's mood, at its frequency and rank, may be SUPPORTED; one that drops the
mood is UNSUPPORTED (basis structure), one with another frequency or rank CONTRADICTED. A past
state ("used to", "once", "曾") does not state the present; the future ("expires in 14 days",
"将于 3 天后过期") does not state that it has happened.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import cues as c

if TYPE_CHECKING:
    from .clauses import Clause, Token

CONDITION = "a condition"
PLAN = "a plan, belief, expectation or instruction"
OPEN = "an open question"
PAST = "a past state"
DENIAL = "a denial or a report shown false"
FUTURE = "the future"


def past(tokens: Sequence["Token"]) -> bool:
    return any(
        t.text in c.PAST_EN or t.text in c.PAST_ZH or (t.text != t.lemma and t.text.endswith("ed")) for t in tokens
    )


def past_tense(tokens: Sequence["Token"]) -> bool:
    """The claim speaks of the past ("was", "曾", "-ed" without a present auxiliary)."""
    texts = {t.text for t in tokens}
    if texts & {"was", "were", "had", "did", "used"} or texts & {"曾", "曾经", "过", "此前", "以前"}:
        return True
    return not texts & {"is", "are", "am", "has", "have", "does", "do"} and past(tokens)


def done(tokens: Sequence["Token"]) -> bool:
    """The claim says it has happened ("has expired", "已经过期", "过期了")."""
    perfect = any(t.text in {"has", "have", "had"} for t in tokens) and past(tokens)
    return perfect or past_tense(tokens) or any(t.text in c.DONE for t in tokens)


def _future(tokens: Sequence["Token"]) -> bool:
    """ "expires in 14 days", "将于 3 天后过期", "下周上线": stated as still to come ("约 6 小时后被
    OOMKilled" is a past narrative: a duration then 后 alone says nothing of the future)."""
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        duration = nxt is not None and nxt.fact is not None and nxt.fact.family == "duration"
        if (t.text == "in" and duration and i and tokens[i - 1].kind == "word" and not past(tokens)) or (
            t.text in c.FUTURE_EN and not (nxt is not None and nxt.text == "to")
        ):
            return True  # "expires in 14 days", not "finished in 1h 40m"
        if t.text in c.FUTURE_ZH and not (t.text == "将" and _marks_object(tokens, i)):
            return True
    return False


def _marks_object(tokens: Sequence["Token"], at: int) -> bool:
    """将 before its object (将 worker 副本数从 3 调整为 6, like 把) rather than before a verb (将上线)."""
    if tokens[at].pos == "p":
        return True
    nxt = tokens[at + 1] if at + 1 < len(tokens) else None  # 将在 / 将于 / 将会: the future
    return nxt is not None and nxt.content and not nxt.pos.startswith("v")


def _modal(tokens: Sequence["Token"]) -> bool:
    return any(
        t.text in c.MODAL_EN or (t.text in c.MODAL_ZH and not (t.text == "将" and _marks_object(tokens, n)))
        for n, t in enumerate(tokens)
    )


def _planned(tokens: Sequence["Token"]) -> bool:
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if t.pos:
            if t.text in c.PLAN_ZH and not (t.text == "将" and _marks_object(tokens, i)):
                return True
            continue
        if t.text == "said" and nxt == "to":
            return True  # hearsay: "is said to be haunted"
        word = t.lemma if t.lemma in c.PLAN_EN else t.text if t.text in c.PLAN_EN else ""
        if not word or (word == "going" and nxt != "to"):
            continue
        if word in c.PLAN_NOUN_EN and nxt not in {"to", "that", "for", "on"}:
            continue  # "the release plan", "a project": nouns
        return True
    return False


def moods(clauses: Sequence["Clause"], *, question: bool = False) -> None:
    """Set `mood` on every clause of one sentence (a question asks, it states nothing)."""
    tokens = [t for clause in clauses for t in clause.tokens]
    texts = {t.text for t in tokens} | {t.lemma for t in tokens}
    mood = ""
    if question:
        mood = OPEN
    elif texts & c.CONDITION_EN or texts & c.CONDITION_ZH or texts & c.WHEN and (_modal(tokens) or not past(tokens)):
        mood = CONDITION
    elif _planned(tokens):
        mood = PLAN
    elif texts & c.DENIAL or any(
        t.text == "false" and n and tokens[n - 1].lemma in {"be", "prove", "proven"} for n, t in enumerate(tokens)
    ):
        mood = DENIAL
    elif texts & c.PAST_ONLY or any(
        t.text == "used" and n + 1 < len(tokens) and tokens[n + 1].text == "to" for n, t in enumerate(tokens)
    ):
        mood = PAST
    elif _future(tokens):
        mood = FUTURE
    for clause in clauses:
        own = {t.text for t in clause.tokens}
        if mood == PAST and own & c.PRESENT and not own & c.PAST_ONLY:
            clause.mood = ""
            continue
        clause.mood = mood or (OPEN if own & c.WHETHER else "")
    _ellipsis(clauses)
    if texts & c.EXCEPT_ZH and not texts & c.ADDITION_ZH:
        _except_zh(clauses)


def _ellipsis(clauses: Sequence["Clause"]) -> None:
    """ "..., but they showed that it is not": a negator with nothing left to govern denies the
    clauses before it, so what they state is not affirmed (the judge abstains on it)."""
    for n, clause in enumerate(clauses):
        if n and clause.tokens and clause.tokens[-1].kind == "neg":
            for earlier in clauses[:n]:
                for t in earlier.tokens:
                    t.scoped = t.scoped or t.content


def _except_zh(clauses: Sequence["Clause"]) -> None:
    """ "除了周一，博物馆每天开馆": what 除了 names is denied, like "except"."""
    for clause in clauses:
        tokens = clause.tokens
        at = next((n for n, t in enumerate(tokens) if t.text in c.EXCEPT_ZH), None)
        if at is None:
            continue
        governed = [t for t in tokens[at + 1 :] if t.content]
        for n, t in enumerate(governed):
            t.negated, t.head = "neg", n == 0


def period(text: str) -> float | None:
    """Seconds between two occurrences that `text` states ("every 2 years", "每周一次"), if any."""
    for n, pattern in enumerate(c.PERIOD_EN):
        match = pattern.search(text)
        if match is None:
            continue
        if n == 0:
            count = 2.0 if match[2] else float(match[1] or 1)
            return count * c.PERIOD_UNITS[match[3]]
        if n == 1:
            return c.PERIOD_UNITS[match[2]] / max(float(match[1]), 1.0)
        return float(c.PERIOD_WORDS[match[1]])
    match = c.PERIOD_ZH.search(text)
    if match is not None:
        return float(match[1] or 1) * c.PERIOD_UNITS[match[2]] / max(float(match[3] or 1), 1.0)
    return None


def _zh_number(raw: str) -> int | None:
    if raw.isdigit():
        return int(raw)
    if raw in c.ZH_DIGITS:
        return c.ZH_DIGITS[raw]
    if len(raw) == 2 and raw[0] == "十" and raw[1] in c.ZH_DIGITS:
        return 10 + c.ZH_DIGITS[raw[1]]
    return None


def _next_word(tokens: Sequence["Token"], i: int) -> int | None:
    return next((j for j in range(i + 1, min(i + 3, len(tokens))) if tokens[j].kind == "word"), None)


def ranks(tokens: Sequence["Token"]) -> list[tuple[str, int]]:
    """(head, rank) of every ranked word: "second largest" -> (large, 2), "tallest" -> (tall, 1),
    "第二大" -> (大, 2), "最大" -> (大, 1)."""
    out: list[tuple[str, int]] = []
    ranked: set[int] = set()  # heads already ranked by the ordinal before them

    def head_of(i: int, rank: int, english: bool) -> None:
        j = _next_word(tokens, i)
        if j is not None:
            out.append((tokens[j].lemma if english else tokens[j].text, rank))
            ranked.add(j)

    for i, t in enumerate(tokens):
        if i in ranked:
            continue
        number = c.ORDINAL_NUMBER.match(t.text)
        zh = None if t.text.isascii() else c.ORDINAL_ZH.match(t.text)
        if t.lemma in c.ORDINALS or number:
            head_of(i, c.ORDINALS.get(t.lemma) or int(number[1]), True)  # type: ignore[index]
        elif zh is not None and _zh_number(zh[1]) is not None:
            if zh[2]:
                out.append((zh[2], _zh_number(zh[1])))  # type: ignore[arg-type]
            else:
                head_of(i, _zh_number(zh[1]), False)  # type: ignore[arg-type]
        elif t.text.isascii() and t.text.endswith("est") and t.text != t.lemma:
            out.append((t.lemma, 1))
        elif t.text == c.SUPERLATIVE_ZH:
            head_of(i, 1, False)
        elif t.text.startswith(c.SUPERLATIVE_ZH) and not t.text.isascii():
            out.append((t.text[1:], 1))
    return out
