"""Gatekeeper (code only): is every evidence binding of every claim real?

Each binding gets exactly one status, checked in this order:
- NO_EVIDENCE: the refId is `$.no_evidence` (the query retrieved nothing; it supports no claim);
- REF_NOT_FOUND: no ref of the session has that id. A binding may also cite a call's raw output
  by its invocationId (logs and metrics tools have no retrieval refs);
- REF_FROM_FAILED_CALL: the ref belongs to a call whose status is FAILED;
- EXCERPT_MISMATCH: the excerpt does not occur in the ref content after normalisation (see
  `text.normalise`: NFKC, width, whitespace, case). An excerpt with an ellipsis ("...", "…",
  "……") matches when its parts occur in the content in order; every part needs at least two
  characters. An empty excerpt never verifies;
- VERIFIED otherwise.

A fabricated excerpt therefore never passes: it must literally occur in a successful call's
content. For a verified binding the excerpt's window (`judge.window`: its log line or sentence
with the one before and after) is kept as the judge's context. A ref is normalised once per
session, however many claims cite it.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

from core.text import compact, normalise
from diagnosis.constants import NO_EVIDENCE_REF
from diagnosis.evaluation_layers import GatekeeperBinding, GatekeeperResult, GatekeeperSummary
from diagnosis.messages import Message, message
from judge.window import excerpt_find, ref_text, window

from .executor_output import Claim
from .types import InvocationData

VERIFIED = "VERIFIED"
REF_NOT_FOUND = "REF_NOT_FOUND"
REF_FROM_FAILED_CALL = "REF_FROM_FAILED_CALL"
EXCERPT_MISMATCH = "EXCERPT_MISMATCH"
NO_EVIDENCE = "NO_EVIDENCE"
STATUSES = (VERIFIED, REF_NOT_FOUND, REF_FROM_FAILED_CALL, EXCERPT_MISMATCH, NO_EVIDENCE)

_ELLIPSIS = re.compile(r"\.{3,}|…+")
_EDGE_PUNCTUATION = " .,;:!?。，；：！？、\"'“”‘’"
_MIN_PART = 2


@dataclass(slots=True)
class Source:
    """Something a binding can cite: a retrieval ref, or a call's raw output."""

    ref_id: str
    source: str
    raw: Any
    invocation: InvocationData
    _normalised: str | None = None
    _lines: str | None = None
    _compact: str | None = None

    @property
    def _raw_text(self) -> str:
        return (self.raw if isinstance(self.raw, str) else json.dumps(self.raw, ensure_ascii=False)) or ""

    @property
    def content(self) -> str:
        """Normalised on first use: most refs of a session are never cited."""
        if self._normalised is None:
            self._normalised = normalise(self._raw_text)
        return self._normalised

    @property
    def lines(self) -> str:
        """Normalised line by line (`judge.window.ref_text`): what a window is cut from."""
        if self._lines is None:
            self._lines = ref_text(self._raw_text)
        return self._lines

    @property
    def compact(self) -> str:
        """The source and the content without spaces, hyphens, underscores: where names are looked up."""
        if self._compact is None:
            self._compact = compact(f"{self.source} {self.content}")
        return self._compact


@dataclass(frozen=True, slots=True)
class CheckedBinding:
    claim_id: str
    ref_id: str
    excerpt: str
    status: str
    reason: Message
    invocation_id: str = ""
    tool: str = ""
    source: str = ""
    context: str = ""  # the verified excerpt's window in its ref (judge.window)
    ref_compact: str = ""  # the source and ref of a verified binding, compact (names the claim's subject)

    def entry(self) -> GatekeeperBinding:
        """The binding as stored (`gatekeeper_result.bindings`, `ClaimCheck.bindings`)."""
        return GatekeeperBinding(
            claim_id=self.claim_id,
            ref_id=self.ref_id,
            excerpt=self.excerpt,
            status=self.status,
            **self.reason.fields("reason"),
            invocation_id=self.invocation_id,
            tool=self.tool,
        )


def source_index(invocations: tuple[InvocationData, ...]) -> dict[str, Source]:
    """refId -> citable source; invocation ids cite raw outputs unless a ref has the same id."""
    index: dict[str, Source] = {}
    for inv in invocations:
        index.setdefault(inv.invocation_id, Source(inv.invocation_id, inv.tool_name, inv.output, inv))
    for inv in invocations:
        for ref in inv.refs:
            index[ref.ref_id] = Source(ref.ref_id, ref.source, ref.content, inv)
    return index


def excerpt_span(excerpt: str, content: str) -> tuple[int, int] | None:
    """Where the normalised excerpt occurs in normalised content, or None. Content is normalised."""
    wanted = normalise(excerpt).strip(_EDGE_PUNCTUATION)
    if not wanted:
        return None
    found = content.find(wanted)
    if found >= 0:
        return found, found + len(wanted)
    parts = [p.strip(_EDGE_PUNCTUATION) for p in _ELLIPSIS.split(wanted)]
    parts = [p for p in parts if p]
    if len(parts) < 2 or any(len(p) < _MIN_PART for p in parts):
        return None
    start: int | None = None
    position = 0
    for part in parts:
        found = content.find(part, position)
        if found < 0:
            return None
        start = found if start is None else start
        position = found + len(part)
    return (start or 0), position


def excerpt_locate(excerpt: str, content: str) -> tuple[int, int] | None:
    """Where `excerpt_span` finds the excerpt, in the raw (not normalised) `content`, or None.

    For showing a reviewer what the gatekeeper matched. Normalising a prefix of the content
    gives a prefix of the normalised content, so the raw offsets are found by bisection on the
    length of the normalised prefix.
    """
    span = excerpt_span(excerpt, normalise(content))
    if span is None:
        return None
    start, end = span

    def raw_offset(normalised: int) -> int:
        """The shortest raw prefix whose normalisation is at least `normalised` long."""
        low, high = 0, len(content)
        while low < high:
            middle = (low + high) // 2
            if len(normalise(content[:middle])) >= normalised:
                high = middle
            else:
                low = middle + 1
        return low

    raw_end = raw_offset(end)
    # The match starts at the raw character whose normalisation produces normalised offset `start`.
    raw_start = raw_offset(start + 1) - 1
    return (raw_start, raw_end) if 0 <= raw_start < raw_end else None


def binding_check(*, claim_id: str, ref_id: str, excerpt: str, sources: dict[str, Source]) -> CheckedBinding:
    if ref_id == NO_EVIDENCE_REF:
        return CheckedBinding(claim_id, ref_id, excerpt, NO_EVIDENCE, message("gatekeeper.no_evidence"))
    source = sources.get(ref_id)
    if source is None:
        return CheckedBinding(claim_id, ref_id, excerpt, REF_NOT_FOUND, message("gatekeeper.ref_not_found"))
    inv = source.invocation
    where = {"invocation_id": inv.invocation_id, "tool": inv.tool_name, "source": source.source}
    if inv.status != "SUCCESS":
        failed = message("gatekeeper.ref_from_failed_call", invocation=inv.invocation_id)
        return CheckedBinding(claim_id, ref_id, excerpt, REF_FROM_FAILED_CALL, failed, **where)
    if not normalise(excerpt).strip(_EDGE_PUNCTUATION):
        return CheckedBinding(claim_id, ref_id, excerpt, EXCERPT_MISMATCH, message("gatekeeper.empty_excerpt"), **where)
    span = excerpt_span(excerpt, source.content)
    if span is None:
        mismatch = message("gatekeeper.excerpt_mismatch")
        return CheckedBinding(claim_id, ref_id, excerpt, EXCERPT_MISMATCH, mismatch, **where)
    lined = excerpt_find(excerpt, source.lines)
    context = window(source.lines, *lined) if lined else window(source.content, *span)
    return CheckedBinding(
        claim_id, ref_id, excerpt, VERIFIED, message("gatekeeper.verified"), context=context,
        ref_compact=source.compact, **where,
    )  # fmt: skip


def gatekeeper_check(*, claims: list[Claim], invocations: tuple[InvocationData, ...]) -> list[CheckedBinding]:
    """Every binding of every claim, in claim then evidence order."""
    sources = source_index(invocations)
    return [
        binding_check(claim_id=claim.claim_id, ref_id=b.ref_id, excerpt=b.excerpt, sources=sources)
        for claim in claims
        for b in claim.evidence
    ]


def gatekeeper_result(*, bindings: list[CheckedBinding]) -> GatekeeperResult:
    """The `gatekeeper_result` layer part: every binding, statuses per claim and the counts."""
    counts = dict.fromkeys(STATUSES, 0)
    by_claim: dict[str, list[str]] = {}
    for b in bindings:
        counts[b.status] += 1
        by_claim.setdefault(b.claim_id, []).append(b.status)
    failed = counts[REF_NOT_FOUND] + counts[REF_FROM_FAILED_CALL] + counts[EXCERPT_MISMATCH]
    summary = GatekeeperSummary(
        total=len(bindings),
        verified=counts[VERIFIED],
        ref_not_found=counts[REF_NOT_FOUND],
        ref_from_failed_call=counts[REF_FROM_FAILED_CALL],
        excerpt_mismatch=counts[EXCERPT_MISMATCH],
        no_evidence=counts[NO_EVIDENCE],
        passed=failed == 0,
    )
    return GatekeeperResult(bindings=[b.entry() for b in bindings], by_claim=by_claim, summary=summary)
