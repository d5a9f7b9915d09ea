"""Plain words for the inspector: what the judge found for a claim, and why the session got its verdict.

Built from the stored reasons (`diagnosis.messages` codes and parameters), in the active language.
The deterministic judge's rationale lists each unit of the claim with what the checks found
(`judge.verdicts.UnitStatus`): aligned units are what the evidence states, unaligned ones what it
does not, structure gaps what it states only with a qualification, conflicts what it contradicts.
The full rationale stays in the inspector, behind a fold; this is the one sentence above it.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext, gettext_noop, ngettext, pgettext

from diagnosis.constants import AiOpsVerdict, ClaimVerdict, VerifierVerdict
from diagnosis.messages import machine_label
from judge.verdicts import UnitStatus

# Units of the rationale that name a check of the clause, not a word of the claim (judge/checks/units.py).
_CHECK_CODES = {"unit.check", "unit.check_status"}
# Conflicts where the evidence states the opposite of the claim's word.
_OPPOSITE = {
    "unit.negation",
    "unit.antonym_states",
    "unit.antonym_nearby",
    "unit.direction_says",
    "unit.direction_goes",
    "unit.says_phrase",
}
# A word the rationale lists twice is named once, under its weakest status.
_WEAKNESS = {UnitStatus.ALIGNED: 0, UnitStatus.STRUCTURE: 1, UnitStatus.UNALIGNED: 2, UnitStatus.CONFLICT: 3}
MAX_LISTED = 5  # units named in a sentence
EVIDENCE_SCORE_GOOD = 60  # the rule evaluation's score from which it reads as "evidence found"


@dataclass(frozen=True, slots=True)
class UnitFinding:
    """One unit of a `judge.decided` rationale."""

    text: str
    is_check: bool
    status: UnitStatus
    detail_code: str
    detail_params: Mapping[str, Any]

    @property
    def shown(self) -> str:
        """A word of the claim in «», a check by its label ("the mood")."""
        if self.is_check:
            return pgettext("a check of the claim", "the {check}").format(check=machine_label(self.text))
        return f"«{self.text}»"


def _nested(value: Any) -> tuple[str, Mapping[str, Any]]:
    if isinstance(value, Mapping) and isinstance(value.get("params"), Mapping):
        return str(value.get("code", "")), value["params"]
    return "", {}


def unit_findings(params: Mapping[str, Any]) -> list[UnitFinding]:
    """The units of a `judge.decided` rationale's parameters; entries of another shape are left out."""
    findings = []
    for entry in params.get("units") or []:
        code, unit = _nested(entry)
        if not code.startswith("unit.") or "text" not in unit:
            continue
        status = str(unit.get("status", UnitStatus.ALIGNED))
        if status not in _WEAKNESS:
            continue
        detail_code, detail_params = _nested(unit.get("detail"))
        findings.append(
            UnitFinding(
                text=str(unit["text"]),
                is_check=code in _CHECK_CODES,
                status=UnitStatus(status),
                detail_code=detail_code,
                detail_params=detail_params,
            )
        )
    return findings


def listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c` in the active language."""
    if len(items) < 2:
        return "".join(items)
    head = pgettext("list separator", ", ").join(items[:-1])
    return pgettext("list of items", "{items} and {last}").format(items=head, last=items[-1])


def _grouped(findings: list[UnitFinding]) -> dict[str, list[str]]:
    """The units shown per status, each word once, under its weakest status (missing before
    qualified before found), less a word inside another of its group («waiting» beside «132 waiting»)."""
    weakest: dict[str, UnitFinding] = {}
    for unit in findings:
        held = weakest.get(unit.text)
        if held is None or _WEAKNESS[unit.status] > _WEAKNESS[held.status]:
            weakest[unit.text] = unit
    grouped: dict[str, list[str]] = {status: [] for status in _WEAKNESS}
    for unit in weakest.values():
        group = [other.text for other in weakest.values() if other.status == unit.status and not other.is_check]
        if unit.is_check or not any(unit.text != other and unit.text in other for other in group):
            grouped[unit.status].append(unit.shown)
    return grouped


def _listed_some(items: list[str]) -> str:
    """At most MAX_LISTED items, the rest counted."""
    if len(items) <= MAX_LISTED:
        return listed(items)
    rest = len(items) - MAX_LISTED + 1
    return listed([*items[: MAX_LISTED - 1], ngettext("{n} more word", "{n} more words", rest).format(n=rest)])


def _conflict_sentence(unit: UnitFinding) -> str:
    detail = unit.detail_params
    if unit.detail_code in {"unit.other_value", "unit.slot_value"} and "value" in detail:
        return gettext("The evidence says «{value}» where the claim says {claimed}.").format(
            value=detail["value"], claimed=unit.shown
        )
    if unit.detail_code == "unit.another_entity" and "other" in detail:
        return gettext("The evidence names «{other}» where the claim names {claimed}.").format(
            other=detail["other"], claimed=unit.shown
        )
    if unit.detail_code in _OPPOSITE:
        return gettext("The evidence states the opposite of {claimed}.").format(claimed=unit.shown)
    return gettext("The evidence conflicts with the claim on {claimed}.").format(claimed=unit.shown)


def _units_sentence(findings: list[UnitFinding]) -> str:
    conflicts = [unit for unit in findings if unit.status == UnitStatus.CONFLICT]
    if conflicts:
        return _conflict_sentence(conflicts[0])
    grouped = _grouped(findings)
    found, missing, qualified = (
        _listed_some(grouped[status]) for status in (UnitStatus.ALIGNED, UnitStatus.UNALIGNED, UnitStatus.STRUCTURE)
    )
    if found and missing:
        return gettext("The evidence states {found}, but not {missing}.").format(found=found, missing=missing)
    if found and qualified:
        return gettext("The evidence states {found}, but {qualified} only with a qualification.").format(
            found=found, qualified=qualified
        )
    if found:
        return gettext("The evidence states {found}.").format(found=found)
    if missing:
        return gettext("The evidence states none of {missing}.").format(missing=missing)
    if qualified:
        return gettext("The evidence states {qualified} only with a qualification.").format(qualified=qualified)
    return gettext("Nothing in the claim could be matched to the evidence.")


# For a rationale stored without a code (an older layer, the agent's own JSON).
_BY_VERDICT = {
    ClaimVerdict.SUPPORTED: gettext_noop("The judge found the claim supported by the evidence."),
    ClaimVerdict.UNSUPPORTED: gettext_noop("The judge did not find the claim in the evidence."),
    ClaimVerdict.CONTRADICTED: gettext_noop("The judge found the evidence contradicting the claim."),
    ClaimVerdict.NO_EVIDENCE: gettext_noop("The agent reported that nothing was found."),
}


def claim_summary(*, verdict: str, code: str, params: Mapping[str, Any] | None) -> str:
    """One sentence: what the evidence states of the claim and what it lacks or contradicts."""
    params = params if isinstance(params, Mapping) else {}
    if code == "judge.decided":
        return _units_sentence(unit_findings(params))
    if code == "judge.decided_encoded":
        similarity = gettext(
            "Similarity in meaning between the claim and the evidence: {similarity} (1 = the same meaning)."
        ).format(similarity=params.get("similarity", "?"))
        return f"{_units_sentence(unit_findings(params))} {similarity}"
    if code in {"judge.escalated", "judge.llm_fallback"}:  # the words of the judge that decided
        inner_code, inner_params = _nested(params.get("rationale"))
        return claim_summary(verdict=verdict, code=inner_code, params=inner_params)
    if code == "judge.llm" and params.get("rationale"):
        return gettext("The LLM judge says: {rationale}").format(rationale=params["rationale"])
    if code == "claim.no_evidence":
        return gettext("The agent reported that nothing was found.")
    if code == "claim.absence_no_evidence":
        return gettext("The agent reported that nothing was found; finding nothing does not prove it is absent.")
    if code == "claim.no_binding":
        return gettext("The claim cites no evidence.")
    if code == "claim.gatekeeper_failed":
        return gettext(
            "None of the evidence the claim cites could be used: the refs are missing, come from failed "
            "calls, or do not contain the quoted excerpt."
        )
    if code in {"judge.nothing_aligned", "judge.error"}:
        return gettext("Nothing in the claim could be matched to the evidence.")
    return gettext(_BY_VERDICT[verdict]) if verdict in _BY_VERDICT else ""


def judge_name(value: str) -> str:
    """Who judged a claim, in words: the rules, the learned judge, an LLM (with its model)."""
    if value.startswith("llm:"):
        return gettext("LLM ({model})").format(model=value.removeprefix("llm:"))
    if value.endswith("(llm-fallback)"):
        return gettext("{judge}, the LLM being unavailable").format(
            judge=judge_name(value.removesuffix("(llm-fallback)"))
        )
    return machine_label(value)


def verdict_reason(*, code: str, params: Mapping[str, Any] | None, fallback: str) -> str:
    """The session verdict's reason in one line (`fallback`: the verifier's rationale as shown)."""
    params = params if isinstance(params, Mapping) else {}
    claims = params.get("claims") or []
    try:
        supported, total = int(params["supported"]), int(params["total"])
    except (KeyError, TypeError, ValueError):
        supported = total = None
    if code == "verifier.critical_contradicted" and claims:
        return ngettext(
            "The evidence contradicts a critical claim ({claims}).",
            "The evidence contradicts critical claims ({claims}).",
            len(claims),
        ).format(claims=", ".join(map(str, claims)))
    if total is None:
        return fallback
    counted = ngettext(
        "{supported} of {total} claim is supported by the evidence",
        "{supported} of {total} claims are supported by the evidence",
        total,
    ).format(supported=supported, total=total)
    if code == "verifier.below_reject" and supported == 0:
        return ngettext(
            "The claim is not supported by the evidence.",
            "None of the {total} claims is supported by the evidence.",
            total,
        ).format(total=total)
    if code == "verifier.below_reject":
        return gettext("Only {counted}: too few to trust the answer.").format(counted=counted)
    if code in {"verifier.needs_evidence", "verifier.needs_evidence_below_pass"} and claims:
        return ngettext(
            "{counted}; a critical or contradicted claim lacks evidence ({claims}).",
            "{counted}; critical or contradicted claims lack evidence ({claims}).",
            len(claims),
        ).format(counted=counted, claims=", ".join(map(str, claims)))
    if code in {"verifier.below_pass", "verifier.summary"}:
        return gettext("{counted}.").format(counted=counted)
    return fallback


def badge_notes(*, session, excerpt_found: bool) -> list[str]:
    """Why a badge of the header reads better than a REJECT or LOW_CONFID verdict: what it measures."""
    if session.verifier_verdict not in {VerifierVerdict.REJECT, VerifierVerdict.LOW_CONFID}:
        return []
    notes = []
    if session.aiops_verdict == AiOpsVerdict.PASS:
        notes.append(
            gettext(
                "AIOps “Pass” checks the report's form (a report, the alert named, evidence tools that "
                "succeeded), not whether its claims hold."
            )
        )
    if session.evidence_score is not None and session.evidence_score >= EVIDENCE_SCORE_GOOD:
        notes.append(
            gettext(
                "The evidence score rates the retrieval (calls that succeeded, exact hits): the agent found "
                "evidence, but its claims do not all follow from it."
            )
        )
    if excerpt_found:
        notes.append(
            gettext(
                "“Excerpt found” on a citation means the quoted text is in the cited evidence, "
                "not that the claim follows from it."
            )
        )
    return notes
