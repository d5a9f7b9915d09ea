"""Structure checks on what aligned: polarity, owners of values, slots, direction, quantifiers,
modality and roles. Each check yields a `Unit` whose status is aligned, unaligned, structure or
conflict; only a conflict located in the aligned clause (or its sentence) makes CONTRADICTED.
"""

from typing import TYPE_CHECKING

from .. import cues
from .. import glossary as g
from ..alignment import Hit, antonym_hits, qualifiers, same_measure, token_groups, word_hits
from ..analysis import Clause, Token
from ..context import CONDITION, DENIAL, FUTURE, OPEN, PAST, PLAN, done, past_tense, ranks
from ..facts import Fact
from ..verdicts import Reason, UnitStatus, reason
from .order import aligned_ids, predicate
from .owners import VERSION, antonym_nearer, foreign_owner, owns, verb_owner
from .units import Unit

if TYPE_CHECKING:
    from ..alignment import Alignment

# Nouns whose value follows them: "namespace prod", "region us-east-1", "版本 v2".
SLOT_KEYS = frozenset(
    {"namespace", "region", "zone", "cluster", "version", "status", "state", "reason", "env", "environment", "host",
     "node", "mode", "level", "type", "image", "tag", "branch", "bucket", "topic", "color",
     "colour", "capital", "language", "命名空间", "区域", "可用区", "集群", "版本", "状态", "原因", "环境", "模式",
     "级别", "类型", "镜像", "标签", "分支", "节点", "主机", "首都", "颜色", "语言"}
)  # fmt: skip
_NAME_POS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})


def _near(hit_clause: Clause, home: Clause | None) -> bool:
    return home is not None and (hit_clause is home or hit_clause.sentence == home.sentence)


def _negative(clause: Clause) -> bool:
    return any(t.negated for t in clause.tokens)


def _polarity_agrees(token: Token, hit: Hit, clause: Clause) -> bool:
    """Same polarity, or an antonym under the opposite one. Negation scope is phrased freely
    ("evicted no keys" / "no keys were evicted"): a negative claim clause agrees with a negated
    evidence word, and a negated claim word with a negative evidence clause."""
    claim, evidence = bool(token.negated), bool(hit.negated)
    if hit.how == "antonym":
        return claim != evidence
    if claim == evidence:
        return True
    return (evidence and _negative(clause)) or (claim and (_negative(hit.clause) or _failed(hit)))


def _failed(hit: Hit) -> bool:
    """ "connect to vault-1 failed", "连接 vault-1 失败": a failure word after the act (not the
    word itself, nor a modifier: 失败的请求, "failed over") denies it as "failed to connect" does."""
    tokens = hit.clause.tokens
    if hit.token is None or hit.token not in tokens:
        return False
    at = tokens.index(hit.token)
    for n in range(at + 1, len(tokens)):
        if tokens[n].text in _FAILURE:
            nxt = tokens[n + 1].text if n + 1 < len(tokens) else ""
            return nxt not in {"的", "over", "back"}
    return False


_FAILURE = frozenset({"failed", "fails", "失败"})


def _scoped(hit: Hit, clause: Clause) -> bool:
    """The evidence word stands after a negator of its clause that does not govern it ("was not
    tested in children": children), and the claim is affirmative: whether it is denied is unclear."""
    return hit.token is not None and hit.token.scoped and not hit.negated and not _negative(clause)


def _in_negation(token: Token, hit: Hit) -> Unit:
    return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.in_negation", clause=hit.clause.text))


def _where(hit: Hit) -> Reason:
    if hit.token is not None and hit.shown != hit.how:
        return reason("unit.where", how=hit.how, word=hit.shown)
    return reason("unit.how", how=hit.how)


def unit_check(token: Token, alignment: "Alignment", sources: str) -> Unit:
    if token.identifier:
        unit = _entity(token, alignment, sources)
    elif token.kind == "value":
        unit = _value(token, alignment)
    else:
        unit = _word(token, alignment, sources)
    if unit.status != UnitStatus.ALIGNED:
        return unit
    return _only_unstated(token, alignment) or _other_statement(token, alignment) or unit


_UNSTATED = frozenset({CONDITION, PLAN, OPEN, DENIAL})


def _only_unstated(token: Token, alignment: "Alignment") -> Unit | None:
    """Every occurrence of the unit stands in a sentence that plans, asks, supposes or denies it
    ("the production rollout is planned for Thursday"), in another mood than the claim's."""
    hits = alignment.hits.get(id(token), ())
    mood = alignment.clause.mood
    if (
        alignment.clause.hedged
        or not hits
        or not all(h.clause.mood in _UNSTATED and h.clause.mood != mood for h in hits)
    ):
        return None
    return Unit(
        token.text,
        UnitStatus.STRUCTURE,
        reason("unit.only_unstated", mood=hits[0].clause.mood, clause=hits[0].clause.text),
    )


_SUBORDINATORS = frozenset({"after", "before", "when", "since", "while", "because", "as", "once", "until", "if",
                            "during", "following", "at", "in", "on"})  # fmt: skip


def _act(tokens: list[Token], n: int) -> bool:
    """A verb: "-ed", irregular, or an "-s" form right after its subject or an adverb."""
    t = tokens[n]
    inflected = t.kind == "word" and t.text.isascii() and t.text.endswith("s") and t.text != t.lemma
    return predicate(t) or (inflected and n > 0 and tokens[n - 1].kind == "word")


def _subordinate(clause: Clause) -> bool:
    first = next((t for t in clause.tokens if t.kind != "light" or t.text in _SUBORDINATORS), None)
    return first is not None and first.text in _SUBORDINATORS


def _other_statement(token: Token, alignment: "Alignment") -> Unit | None:
    """A word of the claim found only in another clause of the home sentence, one that says
    something else (a verb the claim does not state): "usually walks to work, but today she took
    the bus" states no "usually takes the bus"; "is free on Sundays, but visitors must pay on other
    days" no paying on Sundays. Names, values and times carry across clauses; words do not."""
    home, claim = alignment.home, alignment.clause.tokens
    if home is None or token.kind != "word" or not home.text.isascii():
        return None  # English only: a Chinese comma chains one subject's acts (执行 X 扫描，阻塞主线程)
    hits = alignment.hits.get(id(token), ())
    if not hits or any(h.clause is home for h in hits) or not all(h.clause.sentence == home.sentence for h in hits):
        return None
    aligned = aligned_ids(alignment)
    if hits[0].token is not None and predicate(hits[0].token):
        # The claim's verb stands in another clause while the one that states the rest has its own
        # ("usually cycles to school, but today she drove" against "usually drives to school").
        there = hits[0].clause
        if _subordinate(there) or _subordinate(home):
            return None
        if any(t.kind == "value" and any(h.clause is there for h in alignment.hits.get(id(t), ())) for t in claim):
            return None  # "averaged 1,200, peaking at 9,800": the verb comes with its value
        own = next((t for n, t in enumerate(home.tokens) if id(t) not in aligned and _act(home.tokens, n)), None)
        if own is None:
            return None
        why = reason("unit.verb_elsewhere", clause=home.text, own=own.text, word=token.text)
        return Unit(token.text, UnitStatus.STRUCTURE, why)
    if predicate(token):
        return None

    def verb_in_home(n: int, t: Token) -> bool:
        modal = n > 0 and claim[n - 1].text in cues.MODAL_EN  # "must pay", "can freeze"
        return any(
            h.clause is home and (modal or (h.token is not None and predicate(h.token)))
            for h in alignment.hits.get(id(t), ())
        )

    if not any(t is not token and verb_in_home(n, t) for n, t in enumerate(claim)):
        return None  # the home clause states no act of the claim's: nothing to set against
    other = hits[0].clause
    if _subordinate(other) or _subordinate(home):
        return None  # "after the deploy finished, ...": an adjunct of the main clause the claim may cite
    copula = any(t.text in cues.COPULAS for t in other.tokens)  # a statement, not an apposition

    foreign = next(
        (
            t
            for n, t in enumerate(other.tokens)
            if t.content and id(t) not in aligned and (_act(other.tokens, n) or (copula and t.kind == "word"))
        ),
        None,
    )
    if foreign is None:
        return None
    return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.other_clause", clause=other.text, word=foreign.text))


def _word(token: Token, alignment: "Alignment", sources: str) -> Unit:
    home, clause = alignment.home, alignment.clause
    hits = alignment.hits[id(token)]
    swapped = _substituted(token, alignment)
    if swapped is not None:
        return swapped
    antonyms = [h for c in _sentence(home, alignment) for h in antonym_hits(token, c)]
    agreeing = [h for h in hits + antonyms if _polarity_agrees(token, h, clause)]
    if agreeing and all(_scoped(h, clause) for h in agreeing):
        return _in_negation(token, agreeing[0])
    if agreeing:
        hit = next(h for h in agreeing if not _scoped(h, clause))
        mine = {id(h.token) for hits in alignment.hits.values() for h in hits}
        rival = next((a for a in antonyms if not _polarity_agrees(token, a, clause) and id(a.token) not in mine), None)
        if hit.how != "antonym" and rival is not None and antonym_nearer(rival, hit, alignment):
            why = reason("unit.antonym_nearby", word=rival.shown, clause=rival.clause.text)
            return Unit(token.text, UnitStatus.CONFLICT, why)
        searched = hit.negated == "search" or any(t.negated == "search" for t in hit.clause.tokens)
        if token.negated and searched and not any(t.lemma in g.SEARCH_WORDS for t in clause.tokens):
            return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.failed_search", clause=hit.clause.text))
        return _role(token, hit, clause) or Unit(token.text, UnitStatus.ALIGNED, _where(hit))
    opposed = [h for h in hits + antonyms if _near(h.clause, home)]
    if opposed:
        hit = opposed[0]
        if hit.how == "antonym":
            return Unit(
                token.text, UnitStatus.CONFLICT, reason("unit.antonym_states", clause=hit.clause.text, word=hit.shown)
            )
        if token.head or hit.head:
            said = "denies" if hit.negated else "affirms"
            return Unit(token.text, UnitStatus.CONFLICT, reason("unit.negation", said=said, clause=hit.clause.text))
    if hits:
        return Unit(token.text, UnitStatus.UNALIGNED, reason("unit.opposite_polarity"))
    if "-" in token.text and token.text.replace("-", "") in sources:
        return Unit(token.text, UnitStatus.ALIGNED, reason("unit.named_by_ref"))
    if token_groups(token) & g.SYNONYM_GROUPS["because"] and alignment.causal:
        return Unit(token.text, UnitStatus.ALIGNED, reason("unit.causal_link"))
    converse = g.CONVERSE_OF.get(token.lemma)
    if converse and home is not None and any(t.lemma == converse for t in home.tokens):
        if sum(1 for t in clause.tokens if t.identifier or t.pos in _NAME_POS) >= 2:
            return Unit(token.text, UnitStatus.ALIGNED, reason("unit.converse", word=converse))
        return Unit(token.text, UnitStatus.CONFLICT, reason("unit.antonym_states", clause=home.text, word=converse))
    direction = _direction(token, alignment)
    if direction is not None:
        return direction
    slot = _slot(token, alignment)
    if slot is not None:
        return slot
    return Unit(token.text, UnitStatus.UNALIGNED, reason("unit.not_in_evidence"))


def _next_content(tokens: list[Token], at: int, step: int) -> Token | None:
    """The word next to `at` in one noun phrase: adjacent, or across 的 (红色的外套)."""
    n = at + step
    if 0 <= n < len(tokens) and tokens[n].text == "的":
        n += step
    if 0 <= n < len(tokens) and tokens[n].kind == "word":
        return tokens[n]
    return None


def _modifier(token: Token) -> bool:
    return (
        token.kind == "word"
        and not predicate(token)
        and not token.text.endswith("'s")
        and not (token.text.isascii() and token.text.endswith("s") and token.text != token.lemma)  # likes, dogs
        and token.lemma not in cues.ADVERBS
        and token.lemma not in g.LIGHT_EN
    )


def _rank_word(token: Token) -> bool:
    return token.text.isascii() and token.text.endswith("est") and token.text != token.lemma


def _substituted(token: Token, alignment: "Alignment") -> Unit | None:
    """A modifier the home clause states otherwise: the claim's "EU region" / "红色外套" where the
    clause that states the head says "US region" / "蓝色外套" (the claim's word, if anywhere, only
    elsewhere). A located conflict: the same head, another modifier."""
    home = alignment.home
    if home is None or alignment.clause.hedged or not _modifier(token):
        return None  # a hedged claim ("可能下个月关门") asserts too little to conflict
    if any(h.clause is home for h in alignment.hits[id(token)]):
        return None
    claim = alignment.clause.tokens
    head = _next_content(claim, claim.index(token), 1)
    if head is None or not _modifier(head):
        return None
    aligned = aligned_ids(alignment)
    for hit in alignment.hits.get(id(head), ()):
        if hit.clause is not home or hit.token is None or hit.how not in {"verbatim", "lemma"}:
            continue
        other = _next_content(home.tokens, home.tokens.index(hit.token), -1)
        if (
            other is None
            or not _modifier(other)
            or id(other) in aligned
            or other.negated
            or other.lemma == token.lemma
            or (token_groups(other) & token_groups(token))
            or (token.pos and other.pos and token.pos[0] != other.pos[0])
            or (_rank_word(token) and other.text not in g.ANTONYM_OF.get(token.text, ()))
        ):
            continue  # "oldest city" / "largest city": two ranks on two scales, not one slot
        why = reason("unit.says_phrase", words=f"{other.text} {hit.token.text}", clause=home.text)
        return Unit(token.text, UnitStatus.CONFLICT, why)
    return None


_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "its", "their", "his", "her", "my",
                          "our", "your"})  # fmt: skip


def _preposition(tokens: list[Token], at: int) -> str:
    """The role class of the preposition before tokens[at] (determiners skipped), or of the
    Chinese localizer after it (桌子上 / 桌子下), or ""."""
    n = at - 1
    while n >= 0 and tokens[n].text in _DETERMINERS:
        n -= 1
    if n >= 0 and tokens[n].text in cues.PREPOSITION_CLASS:
        return cues.PREPOSITION_CLASS[tokens[n].text]
    if at + 1 < len(tokens) and tokens[at].pos and tokens[at + 1].text in cues.LOCALIZER_CLASS:
        return cues.LOCALIZER_CLASS[tokens[at + 1].text]
    return ""


def _total(tokens: list[Token], at: int) -> bool:
    """The value at `at` is the whole of a part: "98 of 100 connections", "100 个连接中有 97 个"."""
    before = tokens[max(0, at - 2) : at]
    part = len(before) == 2 and before[1].text == "of" and before[0].fact is not None
    within = next((n for n in range(at + 1, min(at + 3, len(tokens))) if tokens[n].text in {"中", "之中"}), None)
    return part or (within is not None and all(t.kind == "word" for t in tokens[at + 1 : within]))


_OR = frozenset({"or", "either", "或", "或者", "还是", "或是"})


def _alternative(tokens: list[Token], at: int) -> bool:
    """The token at `at` is one side of an "or" ("on Monday or Tuesday", "3 或 4 个副本"): the
    nearest content tokens on either side, with the "or" between."""
    left = [t for t in tokens[max(0, at - 3) : at] if t.text in _OR]
    right = [t for t in tokens[at + 1 : at + 4] if t.text in _OR]
    if left:
        gap = tokens[tokens.index(left[-1]) + 1 : at]
        if not any(t.content for t in gap):
            return True
    if right:
        gap = tokens[at + 1 : tokens.index(right[0], at + 1)]
        if not any(t.content for t in gap):
            return True
    return False


def _share(tokens: list[Token], at: int) -> Token | None:
    """A percentage of the word at `at`: "目标的 55%", "55% of the target"."""
    after = tokens[at + 1 : at + 3]
    if len(after) == 2 and after[0].text == "的" and after[1].fact is not None and after[1].fact.family == "percent":
        return after[1]
    before = [t for t in tokens[max(0, at - 3) : at] if t.text not in _DETERMINERS]
    if len(before) >= 2 and before[-1].text == "of" and before[-2].fact is not None:
        return before[-2] if before[-2].fact.family == "percent" else None
    return None


_PLACES = frozenset({"source", "goal", "under", "above", "on", "inside", "outside", "before", "after", "near",
                     "behind", "left", "right"})  # fmt: skip


def _role(token: Token, hit: Hit, clause: Clause) -> Unit | None:
    """The word aligned, but in another role: "from the lake" / "into the lake", 桌子上 / 桌子下
    (opposite roles conflict, other places are a gap); or the evidence only nearly states it
    ("nearly won", "差点错过", "几乎耗尽")."""
    if hit.token is None or hit.token not in hit.clause.tokens:
        return None
    at = hit.clause.tokens.index(hit.token)
    mine = clause.tokens.index(token)
    choice = _alternative(hit.clause.tokens, at)
    if choice and not _alternative(clause.tokens, mine):
        return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.alternative", clause=hit.clause.text))
    if token.kind == "value":
        if _total(hit.clause.tokens, at) and not _total(clause.tokens, mine):
            return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.total", clause=hit.clause.text))
        wanted, stated = _preposition(clause.tokens, mine), _preposition(hit.clause.tokens, at)
        if wanted and stated and frozenset((wanted, stated)) in cues.OPPOSITE_CLASSES:
            why = reason("unit.another_role", stated=stated, wanted=wanted, clause=hit.clause.text)
            return Unit(token.text, UnitStatus.CONFLICT, why)
        return None
    before = [t for t in hit.clause.tokens[max(0, at - 2) : at] if t.kind != "value"]
    if any(t.text in cues.ATTENUATORS for t in before) and not any(
        t.text in cues.ATTENUATORS for t in clause.tokens[max(0, mine - 2) : mine]
    ):
        said = next(t.text for t in before if t.text in cues.ATTENUATORS)
        why = reason("unit.says_phrase", words=f"{said} {hit.token.text}", clause=hit.clause.text)
        return Unit(token.text, UnitStatus.CONFLICT, why)
    share = _share(hit.clause.tokens, at)
    if share is not None and not any(t.fact is not None and t.fact.family == "percent" for t in clause.tokens):
        return Unit(
            token.text, UnitStatus.STRUCTURE, reason("unit.share_only", share=share.text, clause=hit.clause.text)
        )
    wanted, stated = _preposition(clause.tokens, mine), _preposition(hit.clause.tokens, at)
    if not wanted or not stated or wanted == stated:
        return None
    if frozenset((wanted, stated)) in cues.OPPOSITE_CLASSES:
        why = reason("unit.another_role", stated=stated, wanted=wanted, clause=hit.clause.text)
        return Unit(token.text, UnitStatus.CONFLICT, why)
    if wanted in _PLACES and stated in _PLACES:
        why = reason("unit.another_place", clause=hit.clause.text, stated=stated, wanted=wanted)
        return Unit(token.text, UnitStatus.STRUCTURE, why)
    return None


def _sentence(home: Clause | None, alignment: "Alignment") -> list[Clause]:
    if home is None:
        return []
    seen = {id(h.clause): h.clause for hits in alignment.hits.values() for h in hits}
    seen[id(home)] = home
    return [c for c in seen.values() if c.sentence == home.sentence]


def _direction(token: Token, alignment: "Alignment") -> Unit | None:
    word_groups = token_groups(token)
    up = bool(word_groups & g.SYNONYM_GROUPS["increase"])
    down = bool(word_groups & g.SYNONYM_GROUPS["decrease"])
    if not (up or down) or alignment.home is None:
        return None
    for clause in _sentence(alignment.home, alignment):
        for t in clause.tokens:
            groups = token_groups(t)
            if groups & g.SYNONYM_GROUPS["increase" if down else "decrease"]:
                return Unit(
                    token.text, UnitStatus.CONFLICT, reason("unit.direction_says", clause=clause.text, word=t.text)
                )
        for source, target in clause.pairs:
            if source.fact and target.fact and same_measure(source.fact, target.fact):
                rising = float(target.fact.value) > float(source.fact.value)
                move = {"source": source.text, "target": target.text}
                if rising == up:
                    return Unit(token.text, UnitStatus.ALIGNED, reason("unit.direction_of", **move))
                return Unit(token.text, UnitStatus.CONFLICT, reason("unit.direction_goes", **move))
    return None


def _slot(token: Token, alignment: "Alignment") -> Unit | None:
    tokens = alignment.clause.tokens
    at = tokens.index(token)
    key = next((t for t in reversed(tokens[:at]) if t.content), None)
    if key is None or key.lemma not in SLOT_KEYS or alignment.home is None or not _name_like(token):
        return None
    for hit in alignment.hits[id(key)]:
        if hit.token is None or not _near(hit.clause, alignment.home):
            continue
        following = hit.clause.tokens[hit.clause.tokens.index(hit.token) + 1 :]
        value = next((t for t in following if t.content), None)
        if value is not None and _name_like(value):
            why = reason("unit.slot_value", key=key.text, value=value.text, clause=hit.clause.text)
            return Unit(token.text, UnitStatus.CONFLICT, why)
    return None


def _name_like(token: Token) -> bool:
    """A value word ("canary", "prod", "red"), not a verb: uninflected English, no Chinese verb tag."""
    if token.pos:
        return not token.pos.startswith("v")
    return token.text == token.lemma


def _entity(token: Token, alignment: "Alignment", sources: str) -> Unit:
    hits = alignment.hits[id(token)]
    home = alignment.home
    if hits and home is not None and not any(h.clause.sentence == home.sentence for h in hits):
        aligned = aligned_ids(alignment)
        claimed = {t.fact.value for t in alignment.clause.tokens if t.identifier}
        for other in home.tokens:
            if (
                other.identifier
                and id(other) not in aligned
                and other.fact.value not in claimed
                and _same_kind(token.fact, other.fact)
            ):
                why = reason("unit.elsewhere_only", other=other.text, clause=home.text)
                return Unit(token.text, UnitStatus.STRUCTURE, why)
    if hits and _version_event(token, hits, alignment):
        hit = hits[0]
        return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.another_event", clause=hit.clause.text))
    if hits:
        bound = [verb_owner(h, token, alignment) for h in hits]
        if all(bound):
            return Unit(
                token.text, UnitStatus.UNALIGNED, reason("unit.value_of", owner=bound[0], clause=hits[0].clause.text)
            )
        return Unit(token.text, UnitStatus.ALIGNED, _where(next(h for h, b in zip(hits, bound, strict=True) if not b)))
    assert token.fact is not None
    if token.fact.value.replace("-", "").replace("_", "") in sources:
        return Unit(token.text, UnitStatus.ALIGNED, reason("unit.named_by_ref"))
    home = alignment.home
    claimed = {t.fact.value for t in alignment.clause.tokens if t.identifier}
    if home is not None:
        for other in home.tokens:
            if other.identifier and other.fact.value not in claimed and _same_kind(token.fact, other.fact):
                return Unit(
                    token.text, UnitStatus.CONFLICT, reason("unit.another_entity", other=other.text, clause=home.text)
                )
    return Unit(token.text, UnitStatus.UNALIGNED, reason("unit.not_in_evidence"))


def _version_event(token: Token, hits: list[Hit], alignment: "Alignment") -> bool:
    """A version the evidence ties to an event the claim does not state ("introduced in v2.3.0 and
    fixed in v2.3.4" against "v2.3.4 has a memory leak"): the claim states no verb of its own."""
    if token.fact is None or not VERSION.match(token.fact.value) or any(map(predicate, alignment.clause.tokens)):
        return False
    aligned = aligned_ids(alignment)
    for hit in hits:
        if hit.token is None:
            return False
        tokens = hit.clause.tokens
        at = tokens.index(hit.token)
        verb = next((t for t in reversed(tokens[max(0, at - 3) : at]) if t.content), None)
        if verb is None or not predicate(verb) or id(verb) in aligned:
            return False
    return True


def _same_kind(a: Fact, b: Fact) -> bool:
    return a.kind == b.kind == "identifier" and a.family == b.family


def _owner_ok(claim: Clause, evidence: Clause) -> bool:
    """The evidence clause is not about another entity of the kind the claim names."""
    claimed = {f.value for f in claim.entities}
    for entity in evidence.entities:
        if entity.value in claimed:
            continue
        if any(
            _same_kind(entity, mine) and mine.value not in {e.value for e in evidence.entities}
            for mine in claim.entities
        ):
            return False
    return True


def _keys(token: Token, clause: Clause) -> list[Token]:
    at = clause.tokens.index(token)
    before = [t for t in reversed(clause.tokens[:at]) if t.kind == "word"][:2]
    after = [t for t in clause.tokens[at + 1 :] if t.kind == "word"][:2]
    return before + after


def _key_ok(keys: list[Token], clause: Clause, alignment: "Alignment") -> bool:
    """A value's neighbouring words that the evidence states anywhere must be in its clause too."""
    stated = [k for k in keys if alignment.hits.get(id(k))]
    return not stated or any(word_hits(k, clause) for k in stated)


def _value(token: Token, alignment: "Alignment") -> Unit:
    clause, home = alignment.clause, alignment.home
    keys = _keys(token, clause)
    hits = alignment.hits[id(token)]
    owners = {id(h): foreign_owner(h, token, alignment) for h in hits}
    good = [h for h in hits if _owner_ok(clause, h.clause) and _key_ok(keys, h.clause, alignment) and not owners[id(h)]]
    agreeing = [h for h in good if _polarity_agrees(token, h, clause)]
    if agreeing and all(_scoped(h, clause) for h in agreeing):
        return _in_negation(token, agreeing[0])
    if agreeing:
        hit = next(h for h in agreeing if not _scoped(h, clause))
        stated = qualifiers(hit.clause, hit.token) if hit.token is not None else ("", 0.0)
        if (
            any(stated)
            and not any(qualifiers(clause, token))
            and token.fact is not None
            and token.fact.kind in {"quantity", "number"}
        ):
            return Unit(token.text, UnitStatus.STRUCTURE, reason("unit.bounds_only", clause=hit.clause.text))
        return _role(token, hit, clause) or Unit(token.text, UnitStatus.ALIGNED, _where(hit))
    if good and _near(good[0].clause, home):
        said = "denies" if good[0].negated else "affirms"
        return Unit(token.text, UnitStatus.CONFLICT, reason("unit.negation", said=said, clause=good[0].clause.text))
    for rival in alignment.rivals[id(token)]:
        if rival.clause.mood == PAST and not past_tense(clause.tokens):
            continue  # "was previously 2%; it is now 12%": a past value does not hold the present's slot
        if (
            _near(rival.clause, home)
            and _owner_ok(clause, rival.clause)
            and _key_ok(keys, rival.clause, alignment)
            and not foreign_owner(rival, token, alignment, verbs=False)
            and owns(rival, token, alignment)
        ):
            why = reason("unit.other_value", value=rival.shown, clause=rival.clause.text)
            return Unit(token.text, UnitStatus.CONFLICT, why)
    if token.fact is not None and token.fact.value == 0 and home is not None:
        zeroed = [t for t in clause.tokens if t.negated == "zero"]
        if zeroed and all(any(h.negated for h in alignment.hits[id(t)]) for t in zeroed):
            return Unit(token.text, UnitStatus.ALIGNED, reason("unit.zero_absence"))
    if hits:
        owner = owners[id(hits[0])] or ", ".join(sorted(f.value for f in hits[0].clause.entities))
        if not owner:
            return Unit(token.text, UnitStatus.UNALIGNED, reason("unit.stated_for_other", clause=hits[0].clause.text))
        return Unit(
            token.text, UnitStatus.UNALIGNED, reason("unit.stated_for", owner=owner, clause=hits[0].clause.text)
        )
    return Unit(token.text, UnitStatus.UNALIGNED, reason("unit.not_in_evidence"))


def clause_checks(alignment: "Alignment") -> list[Unit]:
    """Quantifier, modality, mood, frequency and rank of the claim clause against its home."""
    home, clause = alignment.home, alignment.clause
    if home is None:
        return []
    sentence = home.siblings
    units = _quantifier(clause, home)
    siblings = {id(h.clause): h.clause for hits in alignment.hits.values() for h in hits if h.clause in sentence}
    qualified = next((c for c in siblings.values() if c is not home and c.quantifier in {"most", "few"}), None)
    if qualified is not None and clause.quantifier not in {"most", "few"} and not units:
        units.append(Unit("quantifier", UnitStatus.STRUCTURE, reason("unit.qualifies", clause=qualified.text)))
    if home.hedged and not clause.hedged:
        units.append(Unit("modality", UnitStatus.STRUCTURE, reason("unit.hedges", clause=home.text)))
    if (
        home.mood
        and home.mood != clause.mood
        and not clause.hedged
        and not (home.mood == PAST and past_tense(clause.tokens))
        and not (home.mood == FUTURE and not done(clause.tokens))
    ):
        units.append(Unit("mood", UnitStatus.STRUCTURE, reason("unit.mood", mood=home.mood, clause=home.text)))
    universal = (clause.quantifier == "all" or clause.period) and not any(t.text in cues.EXCEPT for t in clause.tokens)
    if universal and any(t.text in cues.EXCEPT for c in sentence for t in c.tokens):  # "every day except Mondays"
        units.append(Unit("quantifier", UnitStatus.CONFLICT, reason("unit.exception", clause=home.text)))
    if clause.period is not None:
        stated = [c.period for c in sentence if c.period is not None]
        if not stated:
            units.append(Unit("frequency", UnitStatus.STRUCTURE, reason("unit.no_frequency", clause=home.text)))
        elif not any(abs(p - clause.period) <= 0.01 * clause.period for p in stated):
            units.append(Unit("frequency", UnitStatus.CONFLICT, reason("unit.other_frequency", clause=home.text)))
    stated_ranks = [r for c in sentence for r in ranks(c.tokens)]
    for head, rank in ranks(clause.tokens):
        others = sorted({r for h, r in stated_ranks if h == head})
        if others and rank not in others:
            units.append(Unit("rank", UnitStatus.CONFLICT, reason("unit.rank", head=head, rank=rank, other=others[0])))
    return units


def _quantifier(clause: Clause, home: Clause) -> list[Unit]:
    """all / most / some / few / none of the claim against its home clause: a weaker evidence
    quantifier is a structure gap, an incompatible one ("all" against "some") a conflict."""
    want, have = clause.quantifier, home.quantifier
    if want == "all" and clause.period is not None:
        want = ""  # "every 2 years" is a frequency, checked as such
    if want == "all" and _negative(clause):
        want = "none"  # "实例全部不健康": all ... not == none
    status = None
    if want == "none":
        if not _negative(home):
            status = (
                UnitStatus.CONFLICT if have in {"all", "most", "some"} else UnitStatus.STRUCTURE if not have else None
            )
    elif want == "all":
        status = (
            None if have == "all" else UnitStatus.CONFLICT if have in {"some", "few", "none"} else UnitStatus.STRUCTURE
        )
    elif want == "most":
        status = (
            None
            if have in {"all", "most"}
            else UnitStatus.CONFLICT
            if have in {"few", "none"}
            else UnitStatus.STRUCTURE
        )
    elif want == "some":
        status = UnitStatus.STRUCTURE if have == "all" else None
    elif want == "few":
        status = None if have == "few" else UnitStatus.STRUCTURE
    elif have in {"most", "few"}:
        status = UnitStatus.STRUCTURE  # "mostly on the EU nodes" qualifies what the claim states plainly
    if status is None:
        return []
    why = reason("unit.quantifier", want=want or "it plainly", clause=home.text, have=have or "does not")
    return [Unit("quantifier", status, why)]
