"""Structure checks on what aligned: polarity, owners of values, slots, direction, quantifiers,
modality and roles. Each check yields a `Unit` whose status is aligned, unaligned, structure or
conflict; only a conflict located in the aligned clause (or its sentence) makes CONTRADICTED.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..facts import Fact
from . import glossary as g
from .alignment import Hit, antonym_hits, same_measure, token_groups, value_equal, word_hits
from .analysis import Clause, Token

if TYPE_CHECKING:
    from .deterministic import Alignment

# Nouns whose value follows them: "namespace prod", "region us-east-1", "版本 v2".
SLOT_KEYS = frozenset(
    {"namespace", "region", "zone", "cluster", "version", "status", "state", "reason", "env", "environment", "host",
     "node", "mode", "level", "type", "image", "tag", "branch", "bucket", "topic", "color",
     "colour", "capital", "language", "命名空间", "区域", "可用区", "集群", "版本", "状态", "原因", "环境", "模式",
     "级别", "类型", "镜像", "标签", "分支", "节点", "主机", "首都", "颜色", "语言"}
)  # fmt: skip
_NAME_POS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})


@dataclass(frozen=True, slots=True)
class Unit:
    text: str
    status: str  # aligned | unaligned | structure | conflict
    detail: str

    @property
    def shown(self) -> str:
        return (
            f"{self.text}: {self.detail}" if self.status == "aligned" else f"{self.text}: {self.status} ({self.detail})"
        )


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
    return (evidence and _negative(clause)) or (claim and _negative(hit.clause))


def _where(hit: Hit) -> str:
    return f"{hit.how} «{hit.shown}»" if hit.token is not None and hit.shown != hit.how else hit.how


def unit_check(token: Token, alignment: "Alignment", evidence: list[Clause], sources: str) -> Unit:
    if token.identifier:
        return _entity(token, alignment, sources)
    if token.kind == "value":
        return _value(token, alignment)
    return _word(token, alignment, sources)


def _word(token: Token, alignment: "Alignment", sources: str) -> Unit:
    home, clause = alignment.home, alignment.clause
    hits = alignment.hits[id(token)]
    antonyms = [h for c in _sentence(home, alignment) for h in antonym_hits(token, c)]
    agreeing = [h for h in hits + antonyms if _polarity_agrees(token, h, clause)]
    if agreeing:
        hit = agreeing[0]
        if token.negated and hit.negated == "search" and not any(t.lemma in g.SEARCH_WORDS for t in clause.tokens):
            return Unit(
                token.text,
                "structure",
                f"the evidence only reports a failed search («{hit.clause.text}»): not found is not absent",
            )
        return Unit(token.text, "aligned", _where(hit))
    opposed = [h for h in hits + antonyms if _near(h.clause, home)]
    if opposed:
        hit = opposed[0]
        if hit.how == "antonym":
            return Unit(token.text, "conflict", f"antonym: evidence «{hit.clause.text}» states «{hit.shown}»")
        if token.head or hit.head:
            said = "denies" if hit.negated else "affirms"
            return Unit(token.text, "conflict", f"negation: the evidence {said} it in «{hit.clause.text}»")
    if hits:
        return Unit(token.text, "unaligned", "stated only with the opposite polarity elsewhere")
    if "-" in token.text and token.text.replace("-", "") in sources:
        return Unit(token.text, "aligned", "named by the cited ref")
    if token_groups(token) & g.SYNONYM_GROUPS["because"] and alignment.causal:
        return Unit(token.text, "aligned", "the evidence states a causal link")
    converse = g.CONVERSE_OF.get(token.lemma)
    if converse and home is not None and any(t.lemma == converse for t in home.tokens):
        if sum(1 for t in clause.tokens if t.identifier or t.pos in _NAME_POS) >= 2:
            return Unit(token.text, "aligned", f"converse «{converse}» (roles checked)")
        return Unit(token.text, "conflict", f"antonym: evidence «{home.text}» states «{converse}»")
    direction = _direction(token, alignment)
    if direction is not None:
        return direction
    slot = _slot(token, alignment)
    if slot is not None:
        return slot
    return Unit(token.text, "unaligned", "not in the cited evidence")


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
                return Unit(token.text, "conflict", f"direction: evidence «{clause.text}» says «{t.text}»")
        for source, target in clause.pairs:
            if source.fact and target.fact and same_measure(source.fact, target.fact):
                rising = float(target.fact.value) > float(source.fact.value)
                if rising == up:
                    return Unit(token.text, "aligned", f"direction of «{source.text} -> {target.text}»")
                return Unit(token.text, "conflict", f"direction: evidence goes «{source.text} -> {target.text}»")
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
            return Unit(token.text, "conflict", f"{key.text}: evidence says «{value.text}» («{hit.clause.text}»)")
    return None


def _name_like(token: Token) -> bool:
    """A value word ("canary", "prod", "red"), not a verb: uninflected English, no Chinese verb tag."""
    if token.pos:
        return not token.pos.startswith("v")
    return token.text == token.lemma


def _entity(token: Token, alignment: "Alignment", sources: str) -> Unit:
    hits = alignment.hits[id(token)]
    if hits:
        return Unit(token.text, "aligned", _where(hits[0]))
    assert token.fact is not None
    if token.fact.value.replace("-", "").replace("_", "") in sources:
        return Unit(token.text, "aligned", "named by the cited ref")
    home = alignment.home
    claimed = {t.fact.value for t in alignment.clause.tokens if t.identifier}
    if home is not None:
        for other in home.tokens:
            if other.identifier and other.fact.value not in claimed and _same_kind(token.fact, other.fact):
                return Unit(token.text, "conflict", f"another entity in its place: «{other.text}» («{home.text}»)")
    return Unit(token.text, "unaligned", "not in the cited evidence")


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


def _segment_ok(hit: Hit, alignment: "Alignment") -> bool:
    """Whose number is it? The words since the previous value of its clause own it ("上海人口约
    2400 万，北京 ..."): they must not name someone (a name or identifier) the claim does not."""
    if hit.token is None:
        return True
    tokens = hit.clause.tokens
    at = tokens.index(hit.token)
    start = next((n + 1 for n in range(at - 1, -1, -1) if tokens[n].kind == "value"), 0)
    aligned = {id(h.token) for found in alignment.hits.values() for h in found if h.token is not None}
    return not any((t.identifier or t.pos in _NAME_POS) and id(t) not in aligned for t in tokens[start:at])


def _value(token: Token, alignment: "Alignment") -> Unit:
    clause, home = alignment.clause, alignment.home
    keys = _keys(token, clause)
    hits = alignment.hits[id(token)]
    good = [
        h
        for h in hits
        if _owner_ok(clause, h.clause) and _key_ok(keys, h.clause, alignment) and _segment_ok(h, alignment)
    ]
    agreeing = [h for h in good if _polarity_agrees(token, h, clause)]
    if agreeing:
        return Unit(token.text, "aligned", _where(agreeing[0]))
    if good and _near(good[0].clause, home):
        said = "denies" if good[0].negated else "affirms"
        return Unit(token.text, "conflict", f"negation: the evidence {said} it in «{good[0].clause.text}»")
    for rival in alignment.rivals[id(token)]:
        if (
            _near(rival.clause, home)
            and _owner_ok(clause, rival.clause)
            and _key_ok(keys, rival.clause, alignment)
            and _segment_ok(rival, alignment)
        ):
            return Unit(token.text, "conflict", f"other value: evidence says «{rival.shown}» («{rival.clause.text}»)")
    if token.fact is not None and token.fact.value == 0 and home is not None:
        zeroed = [t for t in clause.tokens if t.negated == "zero"]
        if zeroed and all(any(h.negated for h in alignment.hits[id(t)]) for t in zeroed):
            return Unit(token.text, "aligned", "zero stated as absence")
    if hits:
        owners = ", ".join(sorted(f.value for f in hits[0].clause.entities)) or "something else"
        return Unit(token.text, "unaligned", f"stated for {owners} («{hits[0].clause.text}»)")
    return Unit(token.text, "unaligned", "not in the cited evidence")


def clause_checks(alignment: "Alignment", evidence: list[Clause]) -> list[Unit]:
    """Quantifier and modality of the claim clause against its home clause."""
    home, clause = alignment.home, alignment.clause
    if home is None:
        return []
    units = []
    want, have = clause.quantifier, home.quantifier
    if want == "all" and _negative(clause):
        want = "none"  # "实例全部不健康": all ... not == none
    if want == "all" and have in {"some", "none"}:
        units.append(Unit("quantifier", "conflict", f"the claim says all, the evidence «{home.text}» does not"))
    elif want == "all" and not have:
        units.append(Unit("quantifier", "structure", f"the evidence does not say all («{home.text}»)"))
    elif want == "some" and have == "all":
        units.append(Unit("quantifier", "structure", f"the evidence says all, not some («{home.text}»)"))
    elif want == "none" and have in {"all", "some"} and not _negative(home):
        units.append(Unit("quantifier", "conflict", f"the claim says none, the evidence «{home.text}» does not"))
    elif want == "none" and not have and not _negative(home):
        units.append(Unit("quantifier", "structure", f"the evidence does not say none («{home.text}»)"))
    if home.hedged and not clause.hedged:
        units.append(Unit("modality", "structure", f"the evidence only hedges («{home.text}»)"))
    return units


def _same(a: Token, b: Token) -> bool:
    if a.fact is not None and b.fact is not None:
        return bool(value_equal(a.fact, b.fact, tolerance=0.0, bound=""))
    return a.lemma == b.lemma or bool(token_groups(a) & token_groups(b))


def roles_check(alignment: "Alignment", evidence: list[Clause]) -> list[Unit]:
    """from X to Y against the evidence's pairs; the order of aligned entities around what relates them."""
    units = []
    for source, target in alignment.clause.pairs:
        for clause in evidence:
            for other_source, other_target in clause.pairs:
                if _same(source, other_target) and _same(target, other_source) and not _same(source, other_source):
                    units.append(
                        Unit("roles", "conflict", f"from {source.text} to {target.text}, evidence «{clause.text}»")
                    )
                    return units
    home = alignment.home
    if home is None:
        return units
    placed = []  # (claim index, evidence index, token, how) of tokens aligned in the home clause
    for n, token in enumerate(alignment.clause.tokens):
        if not token.content:
            continue
        hit = next((h for h in alignment.hits.get(id(token), ()) if h.clause is home and h.token is not None), None)
        if hit is not None:
            placed.append((n, home.tokens.index(hit.token), token, hit.how))
    for i, (ca, ea, a, _) in enumerate(placed):
        for cb, eb, b, _ in placed[i + 1 :]:
            if ea == eb or not _related(a, b, ca, cb, ea, eb, placed):
                continue
            claim_span = alignment.clause.tokens[ca + 1 : cb]
            evidence_span = home.tokens[min(ea, eb) + 1 : max(ea, eb)]
            causal = _causal(claim_span) and _causal(evidence_span)
            claim_order = _flip(claim_span, causal)
            evidence_order = (1 if eb > ea else -1) * _flip(evidence_span, causal)
            if claim_order != evidence_order:
                return [*units, Unit("roles", "conflict", f"{a.text} / {b.text} swapped in «{home.text}»")]
    return units


def _related(a: Token, b: Token, ca: int, cb: int, ea: int, eb: int, placed) -> bool:
    """Two aligned tokens of the same kind (names, values of one measure, or words) with the same
    relating word between them on both sides: their order is who does what to whom."""
    if (a.fact is None) != (b.fact is None):
        return False
    if (
        a.fact is not None
        and b.fact is not None
        and (a.fact.kind != b.fact.kind or not (a.fact.kind == "identifier" or same_measure(a.fact, b.fact)))
    ):
        return False
    low, high = sorted((ea, eb))
    return any(
        ca < c < cb and low < e < high and how in {"verbatim", "lemma"} and _relation(t) for c, e, t, how in placed
    )


def _relation(token: Token) -> bool:
    """A token that can relate two others: a verb (jieba's v*, an inflected English word), a
    converse word or a causal marker."""
    if token.fact is not None:
        return False
    if token.pos:
        return token.pos.startswith("v")
    inflected = token.lemma.isascii() and token.text != token.lemma and "-" not in token.text
    return inflected or token.lemma in g.CONVERSE_OF or token.lemma in g.CAUSAL


def _causal(span: list[Token]) -> bool:
    return any(t.lemma in g.CAUSAL for t in span)


def _flip(span: list[Token], causal: bool) -> int:
    """-1 when the span reads backwards: a passive (by / 被), a converse word, or (when both sides
    state a cause between the two) a causal marker that names the effect first."""
    flips = 0
    for i, t in enumerate(span):
        if (
            t.text == "被"
            or (causal and t.lemma in g.REVERSE_CAUSAL)
            or t.text == "by"
            and any(p.lemma == "be" for p in span[max(0, i - 3) : i])
            or t.lemma in {c[1] for c in g.CONVERSES}
        ):
            flips += 1
    return -1 if flips % 2 else 1
