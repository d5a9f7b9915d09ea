"""Candidate evidence for a claim the evidence did not carry: where else in the session its facts are stated.

When a claim is unsupported or a citation failed (ref not found, a failed call's ref, an excerpt
that is not in the ref), the evidence it needed is often in another ref or another call's output
of the same session. Each source (refs and raw outputs of calls, as the gatekeeper indexes them)
is read once per page by the judge's own analysis; a source is a
candidate when it states at least one of the claim's facts (or, for a claim without facts, most of
its words), matched as the deterministic judge matches them (`judges.matching`). The best
MAX_CANDIDATES per claim are shown with the matched spans marked. A failed call's refs are shown
too, after the others and marked: the gatekeeper refuses them, but "the agent had it from a call
that failed" is what the reviewer needs to know.

The work is bounded whatever the session: candidates only for the claims that need them; at most
MAX_SOURCES sources; a source is analysed only when its text mentions one of the claim's units (a
substring test: a fact's digits or code, a word), once per page, its first MAX_SOURCE_CHARS
characters, and at most MAX_ANALYSED_CHARS characters in all per page (the judge's analysis reads
about 50,000 to 100,000 characters a second here). Sources left out by that budget are counted,
and the page says so.
"""

import json
import math
from dataclasses import dataclass, field

from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from diagnosis.constants import ClaimVerdict
from diagnosis.services.producers.gatekeeper import (
    EXCERPT_MISMATCH,
    REF_FROM_FAILED_CALL,
    REF_NOT_FOUND,
    VERIFIED,
    excerpt_locate,
)
from judge.alignment import Hit
from judge.analysis import Analysis, analyse
from judge.matching import ClaimUnit, claim_units, unit_hit, unit_needles

MAX_CANDIDATES = 3  # per claim
MAX_SOURCES = 200
MAX_SOURCE_CHARS = 10_000
MAX_ANALYSED_CHARS = 30_000
CONTEXT_CHARS = 80  # shown around each marked span
FAILED_CITATIONS = frozenset({REF_NOT_FOUND, REF_FROM_FAILED_CALL, EXCERPT_MISMATCH})


@dataclass(slots=True)
class EvidenceSource:
    """Something a claim could have cited: a retrieval ref, or a call's raw output."""

    ref_id: str
    label: str  # the ref's source, or the tool's name
    invocation_id: str
    text: str
    failed: bool = False  # from a FAILED call: not citable (REF_FROM_FAILED_CALL)
    analysis: Analysis | None = None
    folded: str = ""  # the searched text, casefolded, for the mention test

    @property
    def searched(self) -> str:
        return self.text[:MAX_SOURCE_CHARS]


class EvidencePool:
    """The session's sources for one page: each analysed at most once, within MAX_ANALYSED_CHARS."""

    def __init__(self, sources: list[EvidenceSource]) -> None:
        self.sources = sources
        self.spent = 0

    def analysis(self, source: EvidenceSource) -> Analysis | None:
        """The source's analysis, or None when the page's budget is spent."""
        if source.analysis is None:
            size = len(source.searched)
            if self.spent + size > MAX_ANALYSED_CHARS:
                return None
            self.spent += size
            source.analysis = analyse(source.searched)
        return source.analysis


@dataclass(slots=True)
class Candidate:
    source: EvidenceSource
    facts: list[str]  # the claim's facts this source states, as the claim writes them
    words: list[str]
    highlighted: SafeString = field(default_factory=SafeString)
    shown_under: str = ""  # the earlier claim under which the page shows this source in full


def evidence_pool(invocations) -> EvidencePool:
    """The session's sources, in report order: a call's output unless a ref has its id, then its refs."""
    ref_ids = {ref.ref_id for inv in invocations for ref in inv.evidence_refs.all()}
    sources: list[EvidenceSource] = []
    for inv in invocations:
        failed = inv.status != "SUCCESS"
        output = inv.output if isinstance(inv.output, str) else json.dumps(inv.output, ensure_ascii=False)
        if inv.output not in (None, "") and inv.invocation_id not in ref_ids:
            sources.append(EvidenceSource(inv.invocation_id, inv.tool_name, inv.invocation_id, output, failed))
        sources.extend(
            EvidenceSource(ref.ref_id, ref.source, inv.invocation_id, ref.content, failed)
            for ref in inv.evidence_refs.all()
            if ref.content
        )
    return EvidencePool(sources[:MAX_SOURCES])


def needs_candidates(verdict: str, statuses: list[str]) -> bool:
    """An unsupported claim, one that cites nothing real, or one with a failed citation."""
    return verdict in {ClaimVerdict.UNSUPPORTED, ClaimVerdict.NO_EVIDENCE} or any(
        status in FAILED_CITATIONS for status in statuses
    )


def claim_candidates(*, text: str, cited: set[str], pool: EvidencePool) -> tuple[list[Candidate], int]:
    """The sources, other than those in `cited` (`cited_already`), stating the claim's facts: the
    best MAX_CANDIDATES (successful calls' first, then most facts, most words, report order), and
    how many sources mentioning the claim were left unread by the page's budget."""
    units = claim_units(text)
    facts = [unit for unit in units if unit.is_fact]
    words = [unit for unit in units if not unit.is_fact]
    needed_words = max(2, math.ceil(len(words) / 2))
    needles = unit_needles(units)
    scored, unread = [], 0
    for order, source in enumerate(pool.sources):
        if source.ref_id in cited or not _mentions(source, needles):
            continue
        analysis = pool.analysis(source)
        if analysis is None:
            unread += 1
            continue
        fact_hits = _hits(facts, analysis)
        if facts and not fact_hits:
            continue
        word_hits = _hits(words, analysis, near=fact_hits[0][1].clause if fact_hits else None)
        if not facts and len(word_hits) < needed_words:
            continue
        scored.append((source.failed, -len(fact_hits), -len(word_hits), order, source, fact_hits, word_hits))
    scored.sort(key=lambda row: row[:4])
    candidates = []
    for *_key, source, fact_hits, word_hits in scored[:MAX_CANDIDATES]:
        locator = _Locator(source.searched)
        candidates.append(
            Candidate(
                source=source,
                facts=[unit.label for unit, _hit in fact_hits],
                words=[unit.label for unit, _hit in word_hits],
                highlighted=highlight_spans(
                    source.text, [locator.span(unit, hit) for unit, hit in fact_hits + word_hits]
                ),
            )
        )
    return candidates, unread


def _mentions(source: EvidenceSource, needles: set[str]) -> bool:
    if not source.folded:
        source.folded = source.searched.casefold()
    return any(needle in source.folded for needle in needles)


def _hits(units: list[ClaimUnit], analysis: Analysis, near=None) -> list[tuple[ClaimUnit, Hit]]:
    found = []
    for unit in units:
        hit = unit_hit(unit, analysis, near=near if near is not None else (found[0][1].clause if found else None))
        if hit is not None:
            found.append((unit, hit))
    return found


class _Locator:
    """Raw offsets of what a hit matched (the evidence token, else the claim's word) in one source:
    inside the hit's clause when the clause is found, else the first occurrence. The analysis works
    on normalised text (casefolded, spaces next to Chinese dropped, numerals as digits), so the clause
    is found by the gatekeeper's raw-offset search (`excerpt_locate`), once per clause."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.regions: dict[int, tuple[int, int] | None] = {}

    def span(self, unit: ClaimUnit, hit: Hit) -> tuple[int, int] | None:
        key = id(hit.clause)
        if key not in self.regions:
            self.regions[key] = excerpt_locate(hit.clause.text, self.text)
        region = self.regions[key]
        needles = [n for n in (hit.token.text if hit.token is not None else "", unit.token.lemma, unit.label) if n]
        for start, end in ((region,) if region else ()) + ((0, len(self.text)),):
            for needle in needles:
                found = excerpt_locate(needle, self.text[start:end])
                if found is not None:
                    return start + found[0], start + found[1]
        return None


def highlight_spans(text: str, spans: list[tuple[int, int] | None], *, context: int = CONTEXT_CHARS) -> SafeString:
    """The parts of `text` around the spans, each span in <mark>; every piece of text escaped.

    Overlapping spans merge; parts more than 2 * `context` apart are joined by an ellipsis."""
    marked = sorted(span for span in spans if span is not None)
    if not marked:
        shown = text[: 2 * context * 2]
        return format_html("{}{}", shown, "…" if len(text) > len(shown) else "")
    merged: list[list[int]] = []
    for start, end in marked:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    cursor = max(0, merged[0][0] - context)
    if cursor:
        pieces.append("…")
    for start, end in merged:
        if start - cursor > 2 * context:
            pieces.append(conditional_escape(text[cursor : cursor + context]) + "…")
            cursor = start - context
        pieces.append(conditional_escape(text[cursor:start]))
        pieces.append(format_html("<mark>{}</mark>", text[start:end]))
        cursor = end
    tail = text[cursor : cursor + context]
    pieces.append(conditional_escape(tail) + ("…" if cursor + context < len(text) else ""))
    return mark_safe("".join(pieces))  # noqa: S308 - every piece above is escaped or format_html


def cited_already(bindings) -> set[str]:
    """Refs the claim cites that the page shows in full already: verified ones, and a failed call's
    (not citable). A ref cited with a wrong excerpt stays a candidate: it may state the facts elsewhere."""
    return {view.binding.ref_id for view in bindings if view.binding.status in {VERIFIED, REF_FROM_FAILED_CALL}}
