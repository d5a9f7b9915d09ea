"""Who does what to whom, and whose number it is: word order in the home sentence.

Commas cut clauses ("Mount Kilimanjaro, at 5,895 m, is higher than Mount Kenya"), so order is
read over the whole sentence of the claim's home clause:
- roles: two aligned tokens of one kind with the same relating word between them (a verb, a
  converse or causal word, "than" / "比") must stand in the same order on both sides, a passive
  (by / 被) or a reversed cause flipping it; the other order is a located conflict;
- arguments: a claim word whose evidence occurrence is separated from the aligned predicate by
  a verb the claim does not state, or that follows another noun phrase linked to it ("the lawyer
  who the senator met resigned", "the doctor near the actor danced"), may be that verb's or that
  phrase's argument, not the predicate's: the judge abstains (structure);
Whose value a number is: owners.py.
"""

from typing import TYPE_CHECKING

from .. import cues as c
from .. import glossary as g
from ..alignment import same_measure, token_groups, value_equal
from ..analysis import Clause, Token
from ..verdicts import UnitStatus, reason
from .units import Unit

if TYPE_CHECKING:
    from ..alignment import Alignment
_JOINS = frozenset({"and", "but", "or", "then", "before", "after", "while", "until", "并", "并且", "然后", "而", "后"})
_DETERMINERS = frozenset({"the", "a", "an", "this", "his", "her", "their", "its", "my", "our", "your"})
_LINKERS = frozenset(
    {"who", "whom", "whose", "which", "that", "near", "beside", "behind", "besides", "next", "with", "of", "like",
     "的", "旁边", "附近"}
)  # fmt: skip


def relation(token: Token) -> bool:
    """A token that can relate two others: a verb (jieba's v*, any inflected English word, a
    plain-past or irregular verb), a converse or causal word."""
    if token.fact is not None:
        return False
    if token.pos:
        return token.pos.startswith("v")
    inflected = token.lemma.isascii() and token.text != token.lemma and "-" not in token.text
    return inflected or predicate(token) or token.lemma in g.CONVERSE_OF or token.lemma in g.CAUSAL


def predicate(token: Token) -> bool:
    """Surely a verb: jieba's v*, or an English -ed / -ing form, an irregular past, a plain-past
    verb (plurals, comparatives and names simplemma mangles are not)."""
    if token.fact is not None or token.kind == "light":
        return False  # function verbs (发生, 进行, is) relate nothing and own no value
    if token.pos:
        return token.pos.startswith("v")
    if not token.text.isascii() or "-" in token.text:
        return False
    first = token.text.split()[0]  # a phrase ("timed out", "scale up") is a verb if its head is
    if first in c.PLAIN_VERBS or token.lemma in c.PLAIN_VERBS or first in c.IRREGULAR_PAST:
        return True
    return (token.text != token.lemma or " " in token.text) and first.endswith(("ed", "ing"))


def aligned_ids(alignment: "Alignment") -> set[int]:
    """ids of the evidence tokens some claim token aligned to (computed once per alignment)."""
    if alignment.aligned is None:
        alignment.aligned = {id(h.token) for hits in alignment.hits.values() for h in hits if h.token is not None}
    return alignment.aligned


def same_token(a: Token, b: Token) -> bool:
    if a.fact is not None and b.fact is not None:
        return bool(value_equal(a.fact, b.fact, tolerance=0.0, bound=""))
    return a.lemma == b.lemma or bool(token_groups(a) & token_groups(b))


def _placed(alignment: "Alignment", flat: list[Token]) -> list[tuple[int, int, Token, str]]:
    """(claim index, sentence index, token, how) of claim tokens aligned in the home sentence."""
    where = {id(t): n for n, t in enumerate(flat)}
    placed = []
    for n, token in enumerate(alignment.clause.tokens):
        if not token.content:
            continue
        hit = next((h for h in alignment.hits.get(id(token), ()) if h.token is not None and id(h.token) in where), None)
        if hit is not None:
            placed.append((n, where[id(hit.token)], token, hit.how))
    return placed


def roles_check(alignment: "Alignment", evidence: list[Clause]) -> list["Unit"]:
    """from X to Y against the evidence's pairs; the order of aligned tokens around what relates them."""
    for source, target in alignment.clause.pairs:
        for clause in evidence:
            for other_source, other_target in clause.pairs:
                if (
                    same_token(source, other_target)
                    and same_token(target, other_source)
                    and not same_token(source, other_source)
                ):
                    why = reason("unit.roles_from_to", source=source.text, target=target.text, clause=clause.text)
                    return [Unit("roles", UnitStatus.CONFLICT, why)]
    if alignment.home is None:
        return []
    flat = list(alignment.home.flat)
    placed = _placed(alignment, flat)
    shown = " ".join(t.text for t in flat)
    own = _own_subject(alignment, flat, placed, shown)
    if own:
        return own
    claim = alignment.clause.tokens
    for i, (ca, ea, a, _) in enumerate(placed):
        for cb, eb, b, _ in placed[i + 1 :]:
            if ea == eb or not _related(a, b, ca, cb, ea, eb, placed, claim, flat):
                continue
            claim_span = claim[ca + 1 : cb]
            evidence_span = flat[min(ea, eb) + 1 : max(ea, eb)]
            causal = _causal(claim_span) and _causal(evidence_span)
            claim_order = _flip(claim_span, causal)
            evidence_order = (1 if eb > ea else -1) * _flip(evidence_span, causal, aligned_ids(alignment))
            if claim_order != evidence_order:
                return [
                    Unit("roles", UnitStatus.CONFLICT, reason("unit.roles_swapped", a=a.text, b=b.text, clause=shown))
                ]
    return _subject_slot(alignment) or _arguments(alignment, flat, placed, shown)


def _own_subject(alignment: "Alignment", flat: list[Token], placed, shown: str) -> list["Unit"]:
    """The evidence's verb has a subject of its own right before it that the claim does not name
    ("the gateway was restarted after cache-warmer flooded the table": cache-warmer flooded it)."""
    claim = alignment.clause.tokens
    aligned = aligned_ids(alignment)
    for cp, ep, verb, how in placed:
        if not (predicate(verb) or _present(claim, cp)) or how not in {"verbatim", "lemma"}:
            continue
        # An auxiliary before the verb (passive or progressive): the subject may stand further off.
        passive = any(t.text in {"by", "被"} for t in claim[cp + 1 : cp + 3]) or any(
            t.lemma == "be" or t.text == "被" for t in claim[max(0, cp - 2) : cp]
        )
        subjects = [n for ca, n, t, _ in placed if ca < cp and (t.kind == "word" or t.identifier) and not predicate(t)]
        if passive or not subjects or min(subjects) > ep:
            return []  # a passive, a subjectless claim, or a gapped conjunct: the roles and owners decide
        n = next(
            (
                n
                for n in range(ep - 1, -1, -1)
                if flat[n].kind not in {"light", "neg"} and flat[n].text not in c.ADVERBS
            ),
            None,
        )
        before = flat[n] if n is not None else None
        if before is None or id(before) in aligned or predicate(before) or before.lemma in g.CAUSAL:
            return []
        if before.text in _JOINS or any(t.text in _JOINS for t in flat[n + 1 : ep]):
            return []  # "closed on weekdays and opens at 8", "before emptying": a shared subject
        if _agent_of_another(flat, n, verb, aligned):
            return []  # "the painter admired by the mayor donated": the subject stands before the agent
        if before.fact is not None and (not before.identifier or (n and flat[n - 1].kind == "light")):
            return []  # a value ("in v1.4.0 and fixed"), not a subject
        if before.kind == "word" and before.text.endswith("ly"):
            return []
        return [
            Unit(
                verb.text,
                UnitStatus.STRUCTURE,
                reason("unit.before_verb", word=before.text, verb=verb.text, clause=shown),
            )
        ]
    return []


def _present(tokens: list[Token], at: int) -> bool:
    """ "a chef carries plates": an -s form right after the claim's only noun before it is its verb."""
    t = tokens[at]
    if not (t.text.isascii() and t.text.endswith("s") and t.text != t.lemma and t.kind == "word"):
        return False
    before = [x for x in tokens[:at] if x.content]
    return len(before) == 1 and before[0].kind == "word" and not before[0].text.endswith("s")


def _progressive(tokens: list[Token], at: int) -> bool:
    """ "is building": an -ing word right after a form of "be" is a verb, whatever its lemma."""
    return at > 0 and tokens[at].text.endswith("ing") and tokens[at - 1].lemma == "be"


def _passive_aux(tokens: list[Token], at: int) -> bool:
    """A "be" (or 被) right before the verb at `at` makes a passive, unless the verb is an -ing form
    ("is playing" is progressive: its subject acts)."""
    if tokens[at].text.endswith("ing"):
        return False
    return any(t.lemma == "be" or t.text == "被" for t in tokens[max(0, at - 2) : at])


def _pivot(token: Token) -> bool:
    return token.text in c.COPULAS or token.lemma in c.COPULAS or predicate(token)


def _slot(clause: Clause) -> list[Token]:
    """Who a clause speaks of: the words before its verb or copula (the agent after "by"); a
    clause that starts with its verb inherits the clauses before it in the sentence ("her
    husband, Percy Bysshe Shelley, edited")."""
    tokens = clause.tokens
    own = next((n for n, t in enumerate(tokens) if _pivot(t)), None)
    if own is None:
        return []
    by = next((n for n in range(own + 1, min(own + 3, len(tokens))) if tokens[n].text == "by"), None)
    passive = tokens[own].lemma == "be" or (own and tokens[own - 1].lemma == "be")
    if by is not None and passive:  # the agent of a passive ("declined by a third" has none)
        return tokens[by + 1 : by + 4]
    if any(t.content for t in tokens[:own]):
        return tokens[:own]
    before = [t for other in clause.siblings if other.index < clause.index for t in other.tokens]
    return before + tokens[:own]


def _subject_slot(alignment: "Alignment") -> list["Unit"]:
    """The claim's subject is not who the clause stating the rest speaks of (北京是首都，上海是
    人口最多的城市; "produced by Rick Hale; his partner Dana Moss mixed"), or the claim's
    complement comes from a clause about someone else (上海是首都 against 北京是首都): structure."""
    home, claim = alignment.home, alignment.clause.tokens
    pivot = next((n for n, t in enumerate(claim) if _pivot(t)), None)
    if home is None or pivot is None or any(t.lemma in g.CAUSAL for t in claim):
        return []
    after = claim[pivot + 1 : pivot + 4]
    if any(t.text in {"by", "被"} for t in after) or (claim[pivot].lemma == "be" and after and predicate(after[0])):
        return []  # a passive claim: its subject is the patient, the roles check orders it
    aligned = aligned_ids(alignment)

    def foreign(slot: list[Token]) -> list[Token]:
        return [
            t
            for t in slot
            if (t.kind == "word" or t.identifier)
            and id(t) not in aligned
            and not predicate(t)
            and t.lemma not in g.CAUSAL
            and t.text not in c.ADVERBS
        ]

    def within(t: Token, slot: list[Token]) -> bool:
        inside = {id(s) for s in slot}
        return any(h.token is not None and id(h.token) in inside for h in alignment.hits.get(id(t), ()))

    subjects = [
        t
        for t in claim[:pivot]
        if (t.kind == "word" or t.identifier) and not predicate(t) and alignment.hits.get(id(t))
    ]
    slot = _slot(home)
    away = [t for t in subjects if not within(t, slot) and not within(t, home.tokens)]
    if away and foreign(slot):
        said = foreign(slot)[0].text
        why = reason("unit.said_of_not", clause=home.text, said=said, word=away[0].text)
        return [Unit(away[0].text, UnitStatus.STRUCTURE, why)]
    copula = claim[pivot].text in c.COPULAS or claim[pivot].lemma in c.COPULAS
    for t in claim[pivot + 1 :] if copula else ():
        clauses = {id(h.clause): h.clause for h in alignment.hits.get(id(t), ())}
        if not t.content or not clauses or any(cl is home for cl in clauses.values()):
            continue
        for other in clauses.values():
            slot = _slot(other)
            if foreign(slot) and not any(within(s, slot) for s in subjects):
                said = foreign(slot)[0].text
                return [
                    Unit(
                        t.text, UnitStatus.STRUCTURE, reason("unit.said_of", word=t.text, said=said, clause=other.text)
                    )
                ]
    return []


def _related(a, b, ca, cb, ea, eb, placed, claim: list[Token], flat: list[Token]) -> bool:
    """Two aligned tokens of the same kind (names, values of one measure, or words) with the same
    relating word between them on both sides: their order is who does what to whom."""
    if (a.fact is None) != (b.fact is None) and not (a.identifier or b.identifier):
        return False  # a word and a name may be roles ("the scheduler killed billing-job"), not a word and a number
    if (
        a.fact is not None
        and b.fact is not None
        and (a.fact.kind != b.fact.kind or not (a.fact.kind == "identifier" or same_measure(a.fact, b.fact)))
    ):
        return False
    if _time_word(a) or _time_word(b):
        return False  # "held every July": a time is an adjunct, not a role
    low, high = sorted((ea, eb))
    if _compares(claim[ca + 1 : cb]) and _compares(flat[low + 1 : high]):
        return True
    chinese = bool(a.pos or b.pos)
    return any(
        ca < c_ < cb and low < e < high and how in {"verbatim", "lemma"} and (relation(t) or (chinese and t.pos))
        for c_, e, t, how in placed
    )


_TIME_WORDS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "spring", "summer",
     "autumn", "fall", "winter", "today", "yesterday", "tomorrow", "night", "morning", "evening", "afternoon"}
)  # fmt: skip


def _time_word(token: Token) -> bool:
    return token.lemma in _TIME_WORDS or token.pos == "t"


def _compares(span: list[Token]) -> bool:
    return any(t.text in c.ROLE_MARKERS for t in span)


def _causal(span: list[Token]) -> bool:
    return any(t.lemma in g.CAUSAL for t in span)


def _flip(span: list[Token], causal: bool, aligned: set[int] | None = None) -> int:
    """-1 when the span reads backwards: a passive (by / 被), a converse word, or (when both sides
    state a cause between the two) a causal marker that names the effect first. In the evidence
    (`aligned` given) a participle before "by" that the claim does not state is a reduced relative
    ("the painter admired by the mayor donated a mural"), not the passive of the relating verb."""
    flips = 0
    for i, t in enumerate(span):
        participle = i and predicate(span[i - 1]) and (aligned is None or id(span[i - 1]) in aligned)
        if (
            t.text == "被"
            or (causal and t.lemma in g.REVERSE_CAUSAL)
            or t.text == "by"
            and (any(p.lemma == "be" for p in span[max(0, i - 3) : i]) or participle)
            or t.lemma in {c_[1] for c_ in g.CONVERSES}
        ):
            flips += 1
    return -1 if flips % 2 else 1


def _arguments(alignment: "Alignment", flat: list[Token], placed, shown: str) -> list["Unit"]:
    """Abstain when a claim word may be the argument of another verb or phrase of the sentence:
    inside a relative clause before the predicate ("the nurse who the patient thanked left"),
    after a noun phrase it is linked to ("the doctor near the actor danced"), the object of a
    later verb ("praised the film and criticised its ending"), or after the predicate without
    being its passive agent ("reviewed by Chen before it was sent to the editor")."""
    aligned = aligned_ids(alignment)
    claim = alignment.clause.tokens
    verb = next(
        (
            (ca, t)
            for ca, _, t, how in placed
            if (predicate(t) or _progressive(claim, ca) or _present(claim, ca)) and how in {"verbatim", "lemma"}
        ),
        None,
    )
    if verb is None:
        return []
    cp, p = verb
    if any(t.lemma in g.CAUSAL for t in claim):
        return []  # cause and effect: their order is the roles check's
    passive = (
        any(t.text in {"by", "被"} for t in claim[cp + 1 : cp + 3])
        or any(t.text == "被" for t in claim[:cp])
        or _passive_aux(claim, cp)
    )
    ends = [n for n, t in enumerate(flat) if t.lemma == p.lemma]
    attached: dict[int, int] = {}  # claim index -> the occurrence of the verb its argument stands by
    for ca, ea, token, _ in placed:
        if ca != cp and (token.kind == "word" or token.identifier) and not relation(token):
            near = [n for n in ends if (n > ea if ca < cp else n < ea)]
            if near:
                attached[ca] = near[0] if ca < cp else near[-1]
    second = max(attached.values(), default=0)
    own_subject = second and flat[second - 1].kind == "word" and id(flat[second - 1]) not in aligned
    if len(set(attached.values())) > 1 and own_subject:  # "Tom called Anna, and later Anna called Ben"
        return [Unit(p.text, UnitStatus.STRUCTURE, reason("unit.arguments_apart", word=p.text, clause=shown))]
    for ca, ea, token, _ in placed:
        if ca == cp or (token.kind != "word" and not token.identifier) or relation(token):
            continue
        subject = ca < cp and not passive
        after = [n for n in ends if n > ea]
        before = [n for n in ends if n < ea]
        if subject and _agent_of_another(flat, ea, p, aligned):
            return [
                Unit(token.text, UnitStatus.STRUCTURE, reason("unit.agent_of_other", word=token.text, clause=shown))
            ]
        if subject and after:
            span = flat[ea + 1 : after[0]]
            if (
                (_foreign_verb(span, aligned) and _relative_before(flat, ea))
                or _linked_after_foreign(flat, ea, aligned)
                or (_object_relative(span) and not _foreign_verb(span, aligned))
            ):
                return [Unit(token.text, UnitStatus.STRUCTURE, reason("unit.subject_of_other", clause=shown))]
        elif subject and before and p.text.isascii() and not p.pos:
            span = flat[before[-1] + 1 : ea]
            gapped = any(t.fact is not None for t in span)  # "Maria scored 18 and Julia 25": values decide
            if not gapped and (not any(t.text == "by" for t in span) or _foreign_verb(span, aligned)):
                return [Unit(token.text, UnitStatus.STRUCTURE, reason("unit.not_agent", word=p.text, clause=shown))]
        elif ca > cp and before and _foreign_verb(flat[before[-1] + 1 : ea], aligned):
            return [Unit(token.text, UnitStatus.STRUCTURE, reason("unit.object_of_other", clause=shown))]
    return []


def _object_relative(span: list[Token]) -> bool:
    """ "the senator who the actor admired": a relative word, then another noun before the verb
    (the claim's, when no other verb stands between): that noun is its subject, the claim word its
    object."""
    words = [t for t in span if t.text not in _DETERMINERS]
    return (
        len(words) >= 2
        and words[0].text in {"who", "whom", "that", "which"}
        and any(t.kind == "word" and not relation(t) for t in words[1:])
    )


def _agent_of_another(flat: list[Token], at: int, verb: Token, aligned: set[int]) -> bool:
    """ "the secretary supported by the president called": the claim's subject stands as the
    agent ("by X") of a verb the claim does not state."""
    before = [t for t in flat[:at] if t.text not in _DETERMINERS]
    if len(before) < 2 or before[-1].text != "by":
        return False
    other = before[-2]
    return predicate(other) and id(other) not in aligned and other.lemma != verb.lemma


def _foreign_verb(span: list[Token], aligned: set[int]) -> bool:
    return any(t.content and id(t) not in aligned and predicate(t) for t in span)


def _relative_before(flat: list[Token], at: int) -> bool:
    """A relative word (who, that, 的 ...) right before the claim word, determiners skipped."""
    for t in reversed(flat[:at]):
        if t.text in _DETERMINERS:
            continue
        return t.text in {"who", "whom", "which", "that", "whose", "所"}
    return False


def _linked_after_foreign(flat: list[Token], at: int, aligned: set[int]) -> bool:
    """A foreign noun, then a linker (who, near, of, 的), then the claim's subject."""
    seen_foreign = False
    for t in flat[:at]:
        if seen_foreign and t.text in _LINKERS:
            return True
        if t.content and id(t) in aligned:
            seen_foreign = False
        elif t.content and t.kind == "word" and not relation(t):
            seen_foreign = True
    return False
