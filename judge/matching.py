"""Where a claim's units occur in another text: the deterministic judge's units and alignment, no verdict.

For showing a reviewer where a claim's facts are stated (the inspector's candidate evidence, the
answer sentence a claim comes from). A unit is what the judge aligns (`content_units`): values
(numbers with units, codes, identifiers, IPs, times, quoted text: facts.py) and content words,
with the bound or approximation the claim gives a value ("more than 100", "约 30 秒"). A value
matches as the judge matches it (30 s == 30000 ms, 5xx by 503), a word by lemma or glossary.
"""

import re
from dataclasses import dataclass

from .alignment import Hit, content_units, qualifiers, value_hits, word_hits
from .analysis import Analysis, Clause, Token, analyse


@dataclass(frozen=True, slots=True)
class ClaimUnit:
    token: Token
    bound: str = ""
    tolerance: float = 0.0

    @property
    def is_fact(self) -> bool:
        return self.token.kind == "value"

    @property
    def label(self) -> str:
        return self.token.text


def claim_units(text: str) -> tuple[ClaimUnit, ...]:
    """The claim's units, each once (the first occurrence), facts first."""
    units: dict[tuple[str, str], ClaimUnit] = {}
    for clause in analyse(text).clauses:
        for token in content_units(clause):
            bound, tolerance = qualifiers(clause, token)
            units.setdefault((token.kind, token.lemma), ClaimUnit(token, bound, tolerance))
    return tuple(sorted(units.values(), key=lambda unit: not unit.is_fact))


def unit_hit(unit: ClaimUnit, evidence: Analysis, *, near: Clause | None = None) -> Hit | None:
    """The first clause of `evidence` that states the unit (with the same value, for a fact); the
    clauses of `near`'s sentence first, so a claim's units are found together where they are."""
    clauses = evidence.clauses
    if near is not None:
        clauses = sorted(clauses, key=lambda clause: clause.sentence != near.sentence)
    for clause in clauses:
        if unit.is_fact:
            hits, _rivals = value_hits(unit.token, clause, tolerance=unit.tolerance, bound=unit.bound)
        else:
            hits = [hit for hit in word_hits(unit.token, clause) if not hit.negated]
        if hits:
            return hits[0]
    return None


def unit_needles(units: tuple[ClaimUnit, ...]) -> set[str]:
    """Substrings of which a (casefolded) text stating any of the units contains one: a value's
    digits (30 s is also 30000 ms) or its text, a word's text and lemma. A cheap test before
    `analyse`: a text without any of them need not be read (a glossary synonym alone is missed)."""
    found: set[str] = set()
    for unit in units:
        digits = re.findall(r"\d+", unit.label) if unit.is_fact else []
        found.update(digits or {unit.label, unit.token.lemma})
    return {needle for needle in found if len(needle) >= 2 or needle.isdigit()}
