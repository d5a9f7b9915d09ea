"""What the session inspector shows, read through the typed layers (`diagnosis.evaluation_layers`).

Every layer may be missing (its producer failed or has not run yet) or unreadable (agent-sent
legacy JSON, data of an older version): a missing one is named, an unreadable one is named with
its error, and the raw container is always shown. Excerpts are highlighted where the gatekeeper
matched them (`gatekeeper.excerpt_locate`, the gatekeeper's own normalisation). All user content
stays plain text; the only markup produced is `format_html`'s, around escaped text.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch
from django.utils.html import format_html
from django.utils.safestring import SafeString

from backoffice.candidates import (
    Candidate,
    cited_already,
    claim_candidates,
    evidence_pool,
    needs_candidates,
)
from backoffice.plain_words import badge_notes, claim_summary, judge_name, verdict_reason
from core.adminkit.content import markdown_document
from diagnosis.constants import ClaimVerdict
from diagnosis.evaluation_layers import (
    LAYER_TYPES,
    AiOpsCheckEntry,
    AiOpsRuleEvaluation,
    ComposerOutput,
    FactCheck,
    GatekeeperBinding,
    InvalidLayer,
    JudgeReason,
    RuleEvaluation,
    VerifierEvaluation,
    entries_read,
    self_evaluation_read,
)
from diagnosis.messages import machine_text
from diagnosis.models import (
    ClaimCheck,
    ClaimCorrection,
    DiagnosisSession,
    EvidenceRef,
    SessionReview,
    ToolInvocation,
)
from diagnosis.selectors import conversation_turns
from diagnosis.services.producers.gatekeeper import VERIFIED, excerpt_locate
from diagnosis.services.producers.pipeline import applicable_layers
from judge.analysis import Analysis, analyse
from judge.matching import claim_units, unit_hit, unit_needles

EXCERPT_WINDOW = 240
ANSWER_FOLD_CHARS = 1200  # longer answers start folded behind "Show more"
MAX_SENTENCES = 200  # answer sentences a claim is looked for in
MAX_FAILING_SHOWN = 3  # failing claims in the decision block, so the review form stays in view
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)|\n")


def highlight_excerpt(content: str, excerpt: str, *, window: int = EXCERPT_WINDOW) -> tuple[SafeString, bool]:
    """The ref content around the excerpt with the excerpt wrapped in <mark>; every part escaped.

    Returns (html, found). Long contents are cut to `window` characters on each side.
    """
    span = excerpt_locate(excerpt, content) if excerpt and content else None
    if span is None:
        shown = content if len(content) <= 2 * window else content[: 2 * window] + "…"
        return format_html("{}", shown), False
    start, end = span
    before_start = max(0, start - window)
    after_end = min(len(content), end + window)
    before = ("…" if before_start else "") + content[before_start:start]
    after = content[end:after_end] + ("…" if after_end < len(content) else "")
    return format_html("{}<mark>{}</mark>{}", before, content[start:end], after), True


def fact_label(fact: FactCheck) -> str:
    """The fact's value as the answer wrote it: 96.0 reads 96."""
    value = fact.value
    if value is None or value == "":
        return fact.text
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _fact_views(facts: list[FactCheck]) -> list[tuple[FactCheck, str]]:
    return [(fact, fact_label(fact)) for fact in facts]


@dataclass
class BindingView:
    binding: GatekeeperBinding
    source: str = ""
    highlighted: SafeString | None = None
    excerpt_found: bool = False
    ref_missing: bool = False

    @property
    def shown(self) -> bool:
        """A binding to `$.no_evidence` cites nothing: the claim's summary says so instead."""
        return self.binding.status != ClaimVerdict.NO_EVIDENCE


@dataclass
class ClaimView:
    claim_id: str
    text: str
    critical: bool
    verdict: str
    judge: str
    rationale: str
    rationale_code: str
    rationale_params: dict[str, Any]
    # The judge's decision: calibrated scores, band, who decided, its strongest reasons in words.
    p_supported: float | None = None
    p_contradicted: float | None = None
    band: str = ""
    decided_by: str = ""
    reasons: list[str] = field(default_factory=list)
    facts: list[tuple[FactCheck, str]] = field(default_factory=list)  # with its label
    bindings: list[BindingView] = field(default_factory=list)
    sentence: str = ""  # the answer sentence the claim comes from, as the rendered answer reads it
    wants_candidates: bool = False  # unsupported, or a citation failed: look for its evidence elsewhere
    candidates: list[Candidate] = field(default_factory=list)
    candidates_unread: int = 0  # sources mentioning the claim left unread by the page's budget
    summary: str = ""  # what the evidence states of it and what it lacks, in one sentence
    judge_label: str = ""
    round: int | None = None  # its ClaimCheck row's verifier round; None when read from the layer
    correction: ClaimCorrection | None = None  # people's newest verdict on it
    corrections_before: int = 0  # older ones, kept as history

    @property
    def shows_candidates(self) -> bool:
        """A candidate box of its own: sources found, or sources left unread to say so."""
        return self.wants_candidates and bool(self.candidates or self.candidates_unread)

    @property
    def correctable(self) -> bool:
        """People correct the judge on claim check rows (a layer older than the rows has none)."""
        return self.round is not None

    @property
    def failing(self) -> bool:
        return self.verdict != ClaimVerdict.SUPPORTED

    @property
    def shown_bindings(self) -> list[BindingView]:
        return [view for view in self.bindings if view.shown]


def _binding_views(bindings: list[GatekeeperBinding], refs: dict[str, EvidenceRef]) -> list[BindingView]:
    views = []
    for binding in bindings:
        ref = refs.get(binding.ref_id)
        if ref is None:
            views.append(BindingView(binding, ref_missing=True))
        else:
            highlighted, found = highlight_excerpt(ref.content, binding.excerpt)
            views.append(BindingView(binding, source=ref.source, highlighted=highlighted, excerpt_found=found))
    return views


def _reasons(reasons: list[JudgeReason]) -> list[str]:
    """The judge's strongest reasons in the reviewer's language (stored English when a code is unknown)."""
    return [machine_text(r.code, r.params, r.text) for r in reasons]


def _claims_from_rows(rows: list[ClaimCheck], refs: dict[str, EvidenceRef]) -> list[ClaimView]:
    return [
        ClaimView(
            claim_id=row.claim_id,
            round=row.round,
            text=row.text,
            critical=row.critical,
            verdict=row.verdict,
            judge=row.judge,
            rationale=row.rationale,
            rationale_code=row.rationale_code,
            rationale_params=row.rationale_params,
            p_supported=row.p_supported,
            p_contradicted=row.p_contradicted,
            band=row.band,
            decided_by=row.decided_by,
            reasons=_reasons(entries_read(row.reasons, JudgeReason) or []),
            facts=_fact_views(entries_read(row.facts, FactCheck) or []),
            bindings=_binding_views(entries_read(row.bindings, GatekeeperBinding) or [], refs),
        )
        for row in rows
    ]


def _claims_from_layer(verifier: VerifierEvaluation | None, refs: dict[str, EvidenceRef]) -> list[ClaimView]:
    """When no ClaimCheck rows exist (a layer older than the rows): the layer's own claim checks."""
    if verifier is None:
        return []
    bindings = verifier.gatekeeper_result.bindings if verifier.gatekeeper_result else []
    return [
        ClaimView(
            claim_id=check.claim_id,
            text=check.text,
            critical=check.critical,
            verdict=check.verdict,
            judge=check.judge,
            rationale=check.rationale,
            rationale_code=check.rationale_code,
            rationale_params=check.rationale_params,
            p_supported=check.p_supported,
            p_contradicted=check.p_contradicted,
            band=check.band or "",
            decided_by=check.decided_by or "",
            reasons=_reasons(check.reasons),
            facts=_fact_views([fact for fact in verifier.facts_checked if fact.claim_id == check.claim_id]),
            bindings=_binding_views([b for b in bindings if b.claim_id == check.claim_id], refs),
        )
        for check in verifier.claim_checks
    ]


def _attach_words(claims: list[ClaimView]) -> None:
    for claim in claims:
        claim.summary = claim_summary(verdict=claim.verdict, code=claim.rationale_code, params=claim.rationale_params)
        claim.judge_label = judge_name(claim.judge)


def _attach_candidates(claims: list[ClaimView], invocations: list[ToolInvocation]) -> None:
    """Candidate evidence for the claims that need it; the sources are read once for all of them.

    A source is shown in full under the first claim it is a candidate for; a later claim names it
    and links there, so one source never fills the page several times."""
    wanting = [
        claim for claim in claims if needs_candidates(claim.verdict, [view.binding.status for view in claim.bindings])
    ]
    if not wanting:
        return
    pool = evidence_pool(invocations)
    for claim in wanting:
        claim.wants_candidates = True
        claim.candidates, claim.candidates_unread = claim_candidates(
            text=claim.text, cited=cited_already(claim.bindings), pool=pool
        )
    first_claim: dict[str, str] = {}
    for claim in wanting:
        for candidate in claim.candidates:
            first = first_claim.setdefault(candidate.source.ref_id, claim.claim_id)
            candidate.shown_under = "" if first == claim.claim_id else first


def _attach_corrections(claims: list[ClaimView], corrections) -> None:
    """Each claim's newest correction (the queryset is newest first) and how many came before it."""
    by_claim: dict[str, list[ClaimCorrection]] = {}
    for correction in corrections:
        by_claim.setdefault(correction.claim_id, []).append(correction)
    for claim in claims:
        mine = by_claim.get(claim.claim_id, [])
        if mine:
            claim.correction, claim.corrections_before = mine[0], len(mine) - 1


def answer_sentences(blocks: list[str]) -> list[str]:
    """The sentences of the rendered answer's text blocks, at most MAX_SENTENCES."""
    sentences = [part.strip() for block in blocks for part in _SENTENCE_END.split(block)]
    return [sentence for sentence in sentences if sentence][:MAX_SENTENCES]


def _attach_sentences(claims: list[ClaimView], sentences: list[str]) -> None:
    """Each claim's sentence of the answer: the one containing its text, else the one stating most of
    its units (a fact counts two, a word one; at least two). A sentence is analysed only when it
    mentions one of the claim's units, and once for all the claims."""
    folded = [sentence.casefold() for sentence in sentences]
    analyses: dict[int, Analysis] = {}
    for claim in claims:
        text = claim.text.strip()
        verbatim = next((sentence for sentence in sentences if text and text in sentence), "")
        if verbatim:
            claim.sentence = verbatim
            continue
        units = claim_units(text)
        needles = unit_needles(units)
        best_score = 1
        for n, sentence in enumerate(sentences):
            if not any(needle in folded[n] for needle in needles):
                continue
            if n not in analyses:
                analyses[n] = analyse(sentence)
            score = sum(2 if unit.is_fact else 1 for unit in units if unit_hit(unit, analyses[n]) is not None)
            if score > best_score:
                claim.sentence, best_score = sentence, score


@dataclass
class TimelineRow:
    invocation: ToolInvocation
    offset: float  # percent of the total reported latency before this call
    width: float  # percent of the total reported latency
    refs: list[EvidenceRef]


@dataclass
class Inspection:
    session: DiagnosisSession
    answer_html: SafeString  # rendered once: its text blocks also give the claims' sentences
    answer_folded: bool
    duration_seconds: float | None
    steps: list
    timeline: list[TimelineRow]
    total_latency_ms: int
    rule: RuleEvaluation | None
    verifier: VerifierEvaluation | None
    claims: list[ClaimView]
    failing_claims: list[ClaimView]  # the decision's: contradicted first, then critical ones
    failing_more: int  # failing claims beyond MAX_FAILING_SHOWN, left to the evidence view
    claims_without_candidates: list[str]  # wanted candidates, none found: said once for all of them
    verdict_reason: str
    badge_notes: list[str]  # why a badge that measures something else reads better than the verdict
    composer: ComposerOutput | None
    aiops: AiOpsRuleEvaluation | None
    aiops_checks: list[AiOpsCheckEntry]
    missing_layers: list[str]
    legacy_layers: list[str]  # the agent's own JSON, kept until a producer replaces it
    invalid_layers: list[InvalidLayer]
    feedback_events: list
    cases: list
    bad_cases: list
    reviews: list[SessionReview]
    conversation: list[DiagnosisSession]  # the turns of its conversation in order, itself included; [] for none
    raw_json: str


def _verdict_reason(verifier: VerifierEvaluation | None) -> str:
    """The verdict's reason in one line; the verifier's rationale as shown when no plainer words fit."""
    if verifier is None:
        return ""
    shown = machine_text(verifier.rationale_code, verifier.rationale_params, verifier.rationale or "")
    return verdict_reason(code=verifier.rationale_code, params=verifier.rationale_params, fallback=shown)


def inspection_get(*, session: DiagnosisSession, feedback_events, cases, bad_cases) -> Inspection:
    """Load the children of `session` in a fixed number of queries and shape them for the template."""
    invocations = list(
        ToolInvocation.objects.filter(session=session).prefetch_related(
            Prefetch("evidence_refs", queryset=EvidenceRef.objects.order_by("position"))
        )
    )
    refs = {ref.ref_id: ref for invocation in invocations for ref in invocation.evidence_refs.all()}
    total_latency = sum(invocation.latency_ms or 0 for invocation in invocations)
    timeline, elapsed = [], 0
    for invocation in invocations:
        latency = invocation.latency_ms or 0
        timeline.append(
            TimelineRow(
                invocation=invocation,
                offset=round(100.0 * elapsed / total_latency, 2) if total_latency else 0,
                width=max(0.5, round(100.0 * latency / total_latency, 2)) if total_latency else 0.5,
                refs=list(invocation.evidence_refs.all()),
            )
        )
        elapsed += latency

    evaluation = self_evaluation_read(session.self_evaluation)
    invalid = {layer.name for layer in evaluation.invalid}
    # Only a layer the pipeline runs for this session counts as missing: a chat session never gets
    # an AIOps layer, and an AIOps session gets a verifier layer only when it carries executor output.
    expected = applicable_layers(mode=session.mode, has_executor_output=session.executor_output is not None)
    missing = [name for name in expected if evaluation.layer(name) is None and name not in invalid]

    rows = list(ClaimCheck.objects.filter(session=session).order_by("-round", "id"))
    latest_round = rows[0].round if rows else None
    rows = [row for row in rows if row.round == latest_round]
    claims = _claims_from_rows(rows, refs) if rows else _claims_from_layer(evaluation.verifier, refs)
    _attach_words(claims)
    _attach_candidates(claims, invocations)
    _attach_corrections(claims, ClaimCorrection.objects.filter(session=session).select_related("reviewer"))
    answer = markdown_document(session.answer)
    _attach_sentences(claims, answer_sentences(answer.blocks))
    failing = sorted(
        (claim for claim in claims if claim.failing),
        key=lambda claim: (claim.verdict != ClaimVerdict.CONTRADICTED, not claim.critical),
    )
    duration = None
    if session.finished_at and session.created_at:
        duration = (session.finished_at - session.created_at).total_seconds()
    return Inspection(
        session=session,
        answer_html=answer.html,
        answer_folded=len(session.answer) > ANSWER_FOLD_CHARS,
        duration_seconds=duration,
        steps=list(session.steps.all()),
        timeline=timeline,
        total_latency_ms=total_latency,
        rule=evaluation.rule,
        verifier=evaluation.verifier,
        claims=claims,
        failing_claims=failing[:MAX_FAILING_SHOWN],
        failing_more=max(0, len(failing) - MAX_FAILING_SHOWN),
        claims_without_candidates=[
            claim.claim_id for claim in claims if claim.wants_candidates and not claim.shows_candidates
        ],
        verdict_reason=_verdict_reason(evaluation.verifier),
        badge_notes=badge_notes(
            session=session, excerpt_found=any(view.binding.status == VERIFIED for c in claims for view in c.bindings)
        ),
        composer=evaluation.verifier.composer_output if evaluation.verifier else None,
        aiops=evaluation.aiops,
        aiops_checks=evaluation.aiops.checks if evaluation.aiops else [],
        missing_layers=missing,
        legacy_layers=[
            name for name in LAYER_TYPES if evaluation.layer(name) is not None and evaluation.produced(name) is None
        ],
        invalid_layers=list(evaluation.invalid),
        feedback_events=feedback_events,
        cases=cases,
        bad_cases=bad_cases,
        reviews=list(SessionReview.objects.filter(session=session).select_related("reviewer")),
        conversation=list(
            conversation_turns(project_id=session.project_id, conversation_id=session.conversation_id).only(
                "session_id", "conversation_id", "query", "status", "feedback", "created_at"
            )
        )
        if session.conversation_id
        else [],
        raw_json=json.dumps(evaluation.container, ensure_ascii=False, indent=2, sort_keys=True),
    )
