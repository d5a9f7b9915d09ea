"""The deterministic judge: SUPPORTED only when every content unit of the claim aligns to the evidence.

For each claim clause the evidence clause that aligns most of its units is its home; each unit
(content word, value, name) is looked for there first, then in the same sentence, then anywhere in
the cited contexts (the excerpts' sentences, never the whole document). A name may also be
stated by the cited ref or its source (loki://order-service). Then, per unit, the structure
checks of `structure.py`. Verdict:
- a located conflict (another value for the same slot, the opposite direction, a negation or an
  antonym governing the aligned unit, swapped roles) -> CONTRADICTED, naming both sides;
- any unit unaligned -> UNSUPPORTED (basis "unaligned": the cascade may ask the LLM judge);
- aligned, but the evidence hedges, reports only a failed search, or lacks the claim's quantifier
  -> UNSUPPORTED (basis "structure");
- otherwise SUPPORTED.
No threshold: one unaligned unit is enough. The rationale lists every unit and where it aligned.
"""

from dataclasses import dataclass

from core.text import compact, is_causal, states_causal_link
from diagnosis.messages import message

from .alignment import APPROX_TOLERANCE, Hit, qualifier_words, qualifiers, value_hits, word_hits
from .analysis import Clause, Token, analyse
from .base import (
    ALIGNED,
    CONFLICT,
    CONTRADICTED,
    MAX_REASONS,
    STRUCTURE,
    SUPPORTED,
    UNALIGNED,
    UNSUPPORTED,
    JudgeInput,
    Judgement,
)
from .order import roles_check
from .structure import Unit, clause_checks, unit_check

MAX_SHOWN = 12  # units shown in full in a rationale


@dataclass(slots=True)
class Alignment:
    """One claim clause against the evidence clauses: every token's hits, per evidence clause."""

    clause: Clause
    home: Clause | None
    hits: dict[int, list[Hit]]  # id(token) -> hits in every clause, best region first
    rivals: dict[int, list[Hit]]
    causal: bool  # the cited evidence states a causal link somewhere
    aligned: set[int] | None = None  # ids of the evidence tokens aligned to (order.aligned_ids)


class DeterministicJudge:
    """Alignment-based entailment: offline, repeatable, every verdict explains itself.

    Numbers are equal when they are after conversion, up to the claim's rounding ("2.6 s" covers
    2.63 s); `approx_tolerance` is the relative difference allowed after "about" / "约" in the claim.
    """

    name = "deterministic"

    def __init__(self, *, approx_tolerance: float = APPROX_TOLERANCE) -> None:
        self.approx_tolerance = approx_tolerance

    def close(self) -> None:
        """Nothing to release; part of the judge protocol."""

    def judge(self, item: JudgeInput) -> Judgement:
        claim = analyse(item.text)
        evidence = [clause for context in item.evidence for clause in analyse(context).clauses]
        sources = item.sources or compact(" ".join(item.evidence))
        causal = states_causal_link(" ".join(item.evidence))
        units: list[Unit] = []
        if evidence:
            for clause in claim.clauses:
                alignment = self._align(clause, evidence, causal)
                units.extend(unit_check(token, alignment, sources) for token in content_units(clause))
                units.extend(clause_checks(alignment))
                units.extend(roles_check(alignment, evidence))
        if is_causal(item.text) and not causal:
            units.append(Unit("cause", "unaligned", message("unit.no_causal_link")))
        return self._verdict(units)

    def _align(self, clause: Clause, evidence: list[Clause], causal: bool) -> Alignment:
        hits: dict[int, list[Hit]] = {}
        rivals: dict[int, list[Hit]] = {}
        score = [0] * len(evidence)
        for token in content_units(clause):
            found, against = [], []
            bound, tolerance = qualifiers(clause, token, self.approx_tolerance)
            for n, other in enumerate(evidence):
                if token.kind == "value":
                    h, r = value_hits(token, other, tolerance=tolerance, bound=bound)
                    against.extend(r)
                else:
                    h = word_hits(token, other)
                if h:
                    score[n] += 1
                    found.extend(h)
            hits[id(token)], rivals[id(token)] = found, against
        home = evidence[max(range(len(evidence)), key=lambda n: (score[n], -n))] if any(score) else None
        if home is not None:
            for key in hits:
                hits[key].sort(key=lambda h: _region(h.clause, home))
                rivals[key].sort(key=lambda h: _region(h.clause, home))
        return Alignment(clause, home, hits, rivals, causal)

    def _verdict(self, units: list[Unit]) -> Judgement:
        shown = {"units": [u.shown() for u in units[:MAX_SHOWN]], "more": "; …" if len(units) > MAX_SHOWN else ""}
        conflicts = [u for u in units if u.status == "conflict"]
        unaligned = [u for u in units if u.status == "unaligned"]
        structure = [u for u in units if u.status == "structure"]
        aligned = [u for u in units if u.status == "aligned"]
        strongest = tuple(u.described() for u in (conflicts + unaligned + structure or aligned)[:MAX_REASONS])
        if not units:
            why = message("judge.nothing_aligned")
            return Judgement(UNSUPPORTED, why, self.name, basis=UNALIGNED, reasons=(why,))
        if conflicts:
            why = message("judge.conflict", conflicts=[u.described() for u in conflicts], **shown)
            return Judgement(CONTRADICTED, why, self.name, basis=CONFLICT, reasons=strongest)
        if unaligned:
            why = message("judge.unaligned", missing=", ".join(u.text for u in unaligned), **shown)
            return Judgement(UNSUPPORTED, why, self.name, basis=UNALIGNED, reasons=strongest)
        if structure:
            why = message("judge.structure", issues=[u.described() for u in structure], **shown)
            return Judgement(UNSUPPORTED, why, self.name, basis=STRUCTURE, reasons=strongest)
        return Judgement(SUPPORTED, message("judge.aligned", **shown), self.name, basis=ALIGNED, reasons=strongest)


def content_units(clause: Clause) -> list[Token]:
    """The claim's units: its content tokens, less the bound and approximation words of its values."""
    qualifying = qualifier_words(clause)
    return [t for t in clause.tokens if t.content and id(t) not in qualifying]


def _region(clause: Clause, home: Clause) -> int:
    if clause is home:
        return 0
    return 1 if clause.sentence == home.sentence else 2
