"""What the session inspector shows, read defensively from the stored layers and rows.

Every layer may be missing (its producer failed or has not run yet) and every key inside a layer
may be absent or of an unexpected type: nothing here assumes a shape it did not check. All user
content stays plain text; the only markup produced is `format_html`'s, around escaped text.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch
from django.utils.html import format_html
from django.utils.safestring import SafeString

from diagnosis.models import (
    ClaimCheck,
    DiagnosisSession,
    EvidenceRef,
    SessionReview,
    ToolInvocation,
)

EXCERPT_WINDOW = 240


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # a fact "96" stored as 96.0 reads as the answer wrote it
    return json.dumps(value, ensure_ascii=False)


def _find_excerpt(content: str, excerpt: str) -> tuple[int, int] | None:
    """Where the excerpt occurs: exact, then ignoring case, then with any run of whitespace."""
    if not excerpt or not content:
        return None
    index = content.find(excerpt)
    if index >= 0:
        return index, index + len(excerpt)
    words = excerpt.split()
    if not words:
        return None
    match = re.search(r"\s*".join(re.escape(word) for word in words), content, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def highlight_excerpt(content: str, excerpt: str, *, window: int = EXCERPT_WINDOW) -> tuple[SafeString, bool]:
    """The ref content around the excerpt with the excerpt wrapped in <mark>; every part escaped.

    Returns (html, found). Long contents are cut to `window` characters on each side.
    """
    span = _find_excerpt(content, excerpt)
    if span is None:
        shown = content if len(content) <= 2 * window else content[: 2 * window] + "…"
        return format_html("{}", shown), False
    start, end = span
    before_start = max(0, start - window)
    after_end = min(len(content), end + window)
    before = ("…" if before_start else "") + content[before_start:start]
    after = content[end:after_end] + ("…" if after_end < len(content) else "")
    return format_html("{}<mark>{}</mark>{}", before, content[start:end], after), True


@dataclass
class Binding:
    ref_id: str
    excerpt: str
    status: str
    source: str = ""
    highlighted: SafeString | None = None
    excerpt_found: bool = False
    ref_missing: bool = False


@dataclass
class Fact:
    text: str
    kind: str
    found: bool | None
    status: str = ""  # the verifier's word: STATED, MISMATCH, ABSENT


@dataclass
class Claim:
    claim_id: str
    text: str
    critical: bool
    verdict: str
    judge: str
    rationale: str
    facts: list[Fact] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)


def _facts(raw: Any) -> list[Fact]:
    facts = []
    for item in _list(raw):
        if isinstance(item, dict):
            text = _text(item.get("value") or item.get("text") or item.get("fact") or item.get("name"))
            found = item.get("stated", item.get("found", item.get("supported")))
            facts.append(
                Fact(
                    text=text,
                    kind=_text(item.get("kind") or item.get("type")),
                    found=found if isinstance(found, bool) else None,
                    status=_text(item.get("status")),
                )
            )
        elif item is not None:
            facts.append(Fact(text=_text(item), kind="", found=None))
    return facts


def _bindings(raw: Any, refs: dict[str, EvidenceRef]) -> list[Binding]:
    bindings = []
    for item in _list(raw):
        item = _dict(item)
        if not item:
            continue
        ref_id = _text(item.get("ref_id") or item.get("refId"))
        excerpt = _text(item.get("excerpt") or item.get("evidence_excerpt"))
        binding = Binding(
            ref_id=ref_id, excerpt=excerpt, status=_text(item.get("status") or item.get("gatekeeper_status"))
        )
        ref = refs.get(ref_id)
        if ref is None:
            binding.ref_missing = True
        else:
            binding.source = ref.source
            binding.highlighted, binding.excerpt_found = highlight_excerpt(ref.content, excerpt)
        bindings.append(binding)
    return bindings


def _claims_from_rows(rows: list[ClaimCheck], refs: dict[str, EvidenceRef]) -> list[Claim]:
    return [
        Claim(
            claim_id=row.claim_id,
            text=row.text,
            critical=row.critical,
            verdict=row.verdict,
            judge=row.judge,
            rationale=row.rationale,
            facts=_facts(row.facts),
            bindings=_bindings(row.bindings, refs),
        )
        for row in rows
    ]


def _claims_from_json(verifier: dict[str, Any], refs: dict[str, EvidenceRef]) -> list[Claim]:
    """Fallback when no ClaimCheck rows exist (e.g. a legacy layer): the layer's claim_checks."""
    gatekeeper = _dict(verifier.get("gatekeeper_result"))
    gate_bindings = [b for b in _list(gatekeeper.get("bindings")) if isinstance(b, dict)]
    claims = []
    for item in _list(verifier.get("claim_checks")):
        item = _dict(item)
        if not item:
            continue
        claim_id = _text(item.get("claim_id") or item.get("claimId"))
        raw_bindings = (
            item.get("bindings")
            or item.get("evidence")
            or [b for b in gate_bindings if _text(b.get("claim_id") or b.get("claimId")) == claim_id]
        )
        claims.append(
            Claim(
                claim_id=claim_id,
                text=_text(item.get("text") or item.get("claim_text")),
                critical=bool(item.get("critical")),
                verdict=_text(item.get("verdict")),
                judge=_text(item.get("judge")),
                rationale=_text(item.get("rationale")),
                facts=_facts(item.get("facts") or item.get("facts_checked")),
                bindings=_bindings(raw_bindings, refs),
            )
        )
    return claims


@dataclass
class TimelineRow:
    invocation: ToolInvocation
    offset: float  # percent of the total reported latency before this call
    width: float  # percent of the total reported latency
    refs: list[EvidenceRef]


@dataclass
class Inspection:
    session: DiagnosisSession
    duration_seconds: float | None
    steps: list
    timeline: list[TimelineRow]
    total_latency_ms: int
    rule: dict[str, Any]
    rule_factors: list[dict[str, Any]]
    verifier: dict[str, Any]
    claims: list[Claim]
    composer: dict[str, Any]
    aiops: dict[str, Any]
    aiops_checks: list[dict[str, Any]]
    missing_layers: list[str]
    feedback_events: list
    cases: list
    bad_cases: list
    reviews: list[SessionReview]
    raw_json: str


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

    container = _dict(session.self_evaluation)
    rule = _dict(container.get("rule_evaluation"))
    verifier = _dict(container.get("verifier_evaluation"))
    aiops = _dict(container.get("aiops_rule_evaluation"))
    # Only a layer the pipeline runs for this session counts as missing: a chat session never gets
    # an AIOps layer, and an AIOps session gets a verifier layer only when it carries executor output.
    expected = ["rule_evaluation"]
    if session.mode == "chat" or session.executor_output is not None:
        expected.append("verifier_evaluation")
    if session.mode == "aiops":
        expected.append("aiops_rule_evaluation")
    missing = [name for name in expected if not isinstance(container.get(name), dict)]

    rows = list(ClaimCheck.objects.filter(session=session).order_by("-round", "id"))
    latest_round = rows[0].round if rows else None
    rows = [row for row in rows if row.round == latest_round]
    claims = _claims_from_rows(rows, refs) if rows else _claims_from_json(verifier, refs)

    factors = []
    for factor in _list(rule.get("factors")):
        factor = _dict(factor)
        if factor:
            delta = factor.get("delta")
            factors.append(
                {
                    "rule": _text(factor.get("rule")),
                    "delta": delta if isinstance(delta, (int, float)) else None,
                    "detail": {k: v for k, v in factor.items() if k not in {"rule", "delta"}},
                }
            )
    checks = []
    for check in _list(aiops.get("checks")):
        check = _dict(check)
        if check:
            passed = check.get("passed")
            checks.append(
                {
                    "check": _text(check.get("check") or check.get("name")),
                    "passed": passed if isinstance(passed, bool) else None,
                    "reason": _text(check.get("reason")),
                }
            )
    duration = None
    if session.finished_at and session.created_at:
        duration = (session.finished_at - session.created_at).total_seconds()
    return Inspection(
        session=session,
        duration_seconds=duration,
        steps=list(session.steps.all()),
        timeline=timeline,
        total_latency_ms=total_latency,
        rule=rule,
        rule_factors=factors,
        verifier=verifier,
        claims=claims,
        composer=_dict(verifier.get("composer_output")),
        aiops=aiops,
        aiops_checks=checks,
        missing_layers=missing,
        feedback_events=feedback_events,
        cases=cases,
        bad_cases=bad_cases,
        reviews=list(SessionReview.objects.filter(session=session).select_related("reviewer")),
        raw_json=json.dumps(container, ensure_ascii=False, indent=2, sort_keys=True),
    )
