"""Whose value it is: the words and the verb that own a value in the evidence sentence.

- A value belongs to the words since the previous value of its measure (a from -> to series
  shares them) and to its "of" phrase: when those name something the claim does not while the
  claim's own subject stands elsewhere ("Tom is 27 years old and his sister Anna is 34", "revenue
  up 12% ... while net income fell 3%"), the value is someone else's.
- A value belongs to its verb (the nearest before it, after it when it comes first; either in
  Chinese): "introduced in v1.4.0 and fixed in v1.4.2" does not say the fix came in v1.4.0.
- A rival value (same measure, other value) is a located conflict only when the claim's own
  words stand by it.
- An antonym that stands closer to the claim's other words than the aligned word governs them.
"""

import re
from typing import TYPE_CHECKING

from ..alignment import Hit, same_measure, token_groups
from ..analysis import Token
from .order import aligned_ids, predicate, same_token

if TYPE_CHECKING:
    from ..alignment import Alignment


def antonym_nearer(antonym: Hit, hit: Hit, alignment: "Alignment") -> bool:
    """The antonym stands closer to the claim's other aligned words than the hit does ("closed on
    weekdays and opens at 8 a.m. on Saturdays": «closed» governs weekdays)."""
    if antonym.token is None or hit.token is None or antonym.clause.sentence != hit.clause.sentence:
        return False
    flat = hit.clause.flat
    where = {id(t): n for n, t in enumerate(flat)}
    if id(antonym.token) not in where or id(hit.token) not in where:
        return False
    others = [
        where[id(h.token)]
        for key, hits in alignment.hits.items()
        for h in hits[:1]
        if h.token is not None and id(h.token) in where and h.token is not hit.token
    ]
    if not others:
        return False
    a, b = where[id(antonym.token)], where[id(hit.token)]
    return sum(abs(n - a) for n in others) < sum(abs(n - b) for n in others)


def _segment(hit: Hit, token: Token) -> tuple[list[Token], int, int, int] | None:
    """(sentence tokens, index of the value, start and end of the words that own it)."""
    if hit.token is None or token.fact is None:
        return None
    flat = list(hit.clause.flat)
    at = next((n for n, t in enumerate(flat) if t is hit.token), None)
    if at is None:
        return None
    series = {id(source): id(target) for clause in hit.clause.siblings for source, target in clause.pairs}
    start, cursor = 0, at
    for n in range(at - 1, -1, -1):
        other = flat[n]
        if other.fact is None or not same_measure(token.fact, other.fact):
            continue
        if series.get(id(other)) != id(flat[cursor]) and any(t.kind == "word" for t in flat[n + 1 : cursor]):
            start = n + 1
            break
        cursor = n  # a series ("2 s -> 5 s", "从 3 扩容到 6") shares the words before its first value
    return flat, at, start, cursor


def _elsewhere(t: Token, span: list[Token], alignment: "Alignment") -> bool:
    inside = {id(s) for s in span}
    hits = alignment.hits.get(id(t), ())
    return bool(hits) and not any(h.token is not None and id(h.token) in inside for h in hits)


def _named(t: Token) -> bool:
    """A word, a name or a code: what can own a value ("4xx 错误数为 37")."""
    return t.kind == "word" or t.identifier or (t.fact is not None and t.fact.kind == "error_code")


def _before(token: Token, alignment: "Alignment") -> list[Token]:
    claim = alignment.clause.tokens
    return [t for t in claim[: claim.index(token)] if _named(t)]


def _nearest_name(tokens: list[Token] | tuple[Token, ...], at: int) -> Token | None:
    return next((tokens[n] for n in range(at - 1, -1, -1) if tokens[n].identifier), None)


def series_of(hit: Hit) -> set[int]:
    """ids of the values in a from -> to series with the hit's token."""
    members: set[int] = set()
    for clause in hit.clause.siblings:
        for source, target in clause.pairs:
            if hit.token in (source, target):
                members |= {id(source), id(target)}
    return members


def owns(hit: Hit, token: Token, alignment: "Alignment") -> bool:
    """Some claim word before the value stands among the words owning `hit` (a rival value is
    only a conflict when it is the claim's subject's)."""
    found = _segment(hit, token)
    words = [t for t in _before(token, alignment) if alignment.hits.get(id(t))]
    if found is None or not words:
        return True
    flat, _, start, cursor = found
    return any(not _elsewhere(t, flat[start:cursor], alignment) for t in words)


VERSION = re.compile(r"^v?\d+(?:\.\d+)+$")


def verb_owner(hit: Hit, token: Token, alignment: "Alignment") -> str:
    """The verb a value belongs to in the evidence (the nearest to its left, or to its right
    when the value comes first: "In 2019 the startup was acquired") when it is not the claim's
    verb ("introduced in v1.4.0 and fixed in v1.4.2": v1.4.0 is «introduced»'s), or ""."""
    if token.fact is None or (token.identifier and not VERSION.match(token.fact.value)):
        return ""
    claim = alignment.clause.tokens
    mine = claim.index(token)
    verb = next((t for t in reversed(claim[:mine]) if t.fact is not None or predicate(t)), None)
    # A Chinese claim puts its verb after a time or place ("在 30000ms 后超时"): jieba may tag it n.
    after = next((t for t in claim[mine + 1 :] if t.content), None)
    chinese = after is not None and not after.text.isascii() and (predicate(after) or bool(token_groups(after)))
    verbs = [t for t in (verb, after if chinese else None) if t is not None and t.fact is None]
    found = _segment(hit, token)
    if not verbs or found is None:
        return ""
    verb = verbs[0]
    flat, at, start, cursor = found
    gapped = start > 0 and any(
        not predicate(t) and not _elsewhere(t, flat[start:cursor], alignment) for t in _before(token, alignment)
    )
    if gapped:
        return ""  # the claim's subject stands by this value ("... and her teammate Julia 25")
    if not any(t.lemma == verb.lemma or (t.kind == "word" and same_token(t, verb)) for t in flat):
        return ""
    # Look in the value's own clause first ("..., 09:40 又缩容到 4 个实例": 缩容's), then the
    # sentence; a value of the same measure before any verb means the verb is that value's.
    own = hit.clause.tokens
    mine_at = next(n for n, t in enumerate(own) if t is hit.token)
    left = right = None
    for scope, position in ((own, mine_at), (flat, at)):
        for n in range(position - 1, -1, -1):
            t = scope[n]
            if predicate(t):
                left = t
                break
            if t.fact is not None and same_measure(token.fact, t.fact) and id(t) not in series_of(hit):
                blocked = next((v for v in scope[:n] if same_token(v, verb)), None)
                if blocked is not None:
                    return f"{blocked.text} {t.text}"
                break
        if scope is own or not hit.token.pos:  # Chinese: not past the value's own clause
            right = next((t for t in scope[position + 1 :] if predicate(t)), None)
        if left is not None or right is not None:
            break
    # English: the verb before the value owns it ("fixed in v1.4.2"), the next one only for a
    # fronted value; Chinese puts times and places before the verb too ("于 09:12 触发").
    owners = [t for t in (left, right if left is None or left.pos else None) if t is not None]
    if not owners or any(
        t.lemma == v.lemma or same_token(t, v) for t in owners for v in verbs + _claim_verbs(claim, mine)
    ):
        return ""
    return owners[0].text


def _claim_verbs(claim: list[Token], mine: int) -> list[Token]:
    """The verbs next to the value in the claim, read as the evidence is read: a claim that words
    it as the evidence does has the evidence's owner ("过去 10 分钟 TLS 握手失败率为 4%")."""
    left = next((t for t in reversed(claim[:mine]) if predicate(t)), None)
    right = next((t for t in claim[mine + 1 :] if predicate(t)), None)
    return [t for t in (left, right) if t is not None]


def foreign_owner(hit: Hit, token: Token, alignment: "Alignment", *, verbs: bool = True) -> str:
    """The words owning the value at `hit` when they are not the claim's, or "". With `verbs`
    False only other subjects count (a rival value holds the slot whatever its verb)."""
    found = _segment(hit, token)
    if found is None:
        return ""
    bound = verb_owner(hit, token, alignment) if verbs else ""
    if bound:
        return f"the value of «{bound}»"
    flat, at, start, cursor = found
    aligned = aligned_ids(alignment)
    claim = alignment.clause.tokens
    mine = claim.index(token)

    def foreign(span: list[Token]) -> list[Token]:
        return [t for t in span if _named(t) and id(t) not in aligned]

    # The name nearest before the value is its owner ("payment-svc: upstream ledger-api responded
    # 503"): it must be the one nearest before it in the claim.
    mine_name, its_name = _nearest_name(claim, mine), _nearest_name(flat, at)
    if (
        mine_name is not None
        and its_name is not None
        and "name" not in {its_name.fact.family, mine_name.fact.family}  # services, hosts: not metric names
        and its_name.fact.value != mine_name.fact.value
        and id(its_name) in aligned
        and any(t.identifier and t.fact.value == mine_name.fact.value for t in flat)
    ):
        return its_name.text

    segment = flat[start:cursor]
    before = [t for t in _before(token, alignment) if _elsewhere(t, segment, alignment)]
    others = foreign(segment)
    # Another subject by the value ("his sister Anna is 34"), or the claim's verb by another value
    # while this one has its own ("averaged 1,200, peaking at 9,800").
    nouns, verbs = [t for t in others if not predicate(t)], [t for t in others if predicate(t)]
    here = {id(t) for t in flat}
    subjects = [t for t in before if not predicate(t)]
    near = [t for t in subjects if any(h.token is not None and id(h.token) in here for h in alignment.hits[id(t)])]
    if (nouns and subjects) or (verbs and (near or any(map(predicate, before)))):
        return " ".join(t.text for t in others)
    # "12 percent of the country" against "12 percent of its forests": the whole after "of".
    if (
        claim[mine + 1 : mine + 2]
        and claim[mine + 1].text == "of"
        and flat[at + 1 : at + 2]
        and flat[at + 1].text == "of"
    ):
        end = next((n for n in range(at + 1, len(flat)) if flat[n].fact is not None), len(flat))
        tail, wanted = flat[at + 1 : end], [t for t in claim[mine + 2 : mine + 5] if t.kind == "word"]
        if foreign(tail) and any(_elsewhere(t, tail, alignment) for t in wanted):
            return " ".join(t.text for t in foreign(tail))
    return ""
