"""People's claim verdicts as labelled pairs, in the format `judge_benchmark` and `judge_train` read.

One pair per corrected claim (its newest correction): the claim, the evidence the judge read
(the windows the gatekeeper cut around each verified excerpt, by the gatekeeper's own code, from
the session's evidence as stored), the person's verdict as the label, and where it comes from.
A correction is left out, and counted, when the judge read nothing (no verified excerpt), when
its label is "no evidence" (the agent's report, not a judgement), or when the session's evidence
has changed since (a later verifier round: the window read then is not the one stored now).
"""

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import OuterRef, Subquery

from core.tenancy.models import Project
from diagnosis.evaluation_layers import GatekeeperBinding, entries_read
from diagnosis.models import ClaimCheck, ClaimCorrection, ClaimVerdict, DiagnosisSession, EvidenceRef, ToolInvocation
from diagnosis.services.evaluation_data import SESSION_COLUMNS, session_data_from_models
from diagnosis.services.producers.gatekeeper import VERIFIED, binding_check, source_index

# Sessions read together: a fixed number of queries per chunk, whatever the chunk holds.
CHUNK = 200
LABELS = (ClaimVerdict.SUPPORTED, ClaimVerdict.UNSUPPORTED, ClaimVerdict.CONTRADICTED)


@dataclass
class PairExport:
    """Pairs written, and corrections left out by why (see the module docstring)."""

    written: int = 0
    left_out: Counter = field(default_factory=Counter)


def judge_pair_records(*, report: PairExport, project: Project | None = None) -> Iterator[dict[str, Any]]:
    """One pair (a plain dict) per corrected claim, sessions oldest first, claims in id order."""
    newest = ClaimCorrection.objects.filter(session_id=OuterRef("session_id"), claim_id=OuterRef("claim_id"))
    corrections = ClaimCorrection.objects.filter(
        pk=Subquery(newest.order_by("-created_at", "-pk").values("pk")[:1])
    ).order_by("session__created_at", "session_id", "claim_id")
    if project is not None:
        corrections = corrections.filter(session__project=project)
    chunk: list[ClaimCorrection] = []
    for correction in corrections.only("session_id", "round", "claim_id", "claim_text", "verdict").iterator():
        if chunk and chunk[-1].session_id != correction.session_id and len(chunk) >= CHUNK:
            yield from _pairs(chunk, report)
            chunk = []
        chunk.append(correction)
    if chunk:
        yield from _pairs(chunk, report)


def _pairs(corrections: list[ClaimCorrection], report: PairExport) -> Iterator[dict[str, Any]]:
    session_pks = {c.session_id for c in corrections}
    sessions = (
        DiagnosisSession.objects.select_related("project").only(*SESSION_COLUMNS, "project__slug").in_bulk(session_pks)
    )
    checks = {
        (check.session_id, check.claim_id): check
        for check in ClaimCheck.objects.filter(session_id__in=session_pks).order_by("round")
    }  # the latest round's check of each claim last, so it stays
    invocations, refs = defaultdict(list), defaultdict(list)
    for invocation in ToolInvocation.objects.filter(session_id__in=session_pks):
        invocations[invocation.session_id].append(invocation)
    for ref in EvidenceRef.objects.filter(session_id__in=session_pks):
        refs[ref.session_id].append(ref)
    sources = {
        pk: source_index(
            session_data_from_models(session=session, invocations=invocations[pk], refs=refs[pk]).invocations
        )
        for pk, session in sessions.items()
    }
    for correction in corrections:
        check = checks.get((correction.session_id, correction.claim_id))
        if correction.verdict not in LABELS:
            report.left_out["labelled no evidence"] += 1
            continue
        if check is None or check.round != correction.round:
            report.left_out["evidence changed since"] += 1
            continue
        windows = [
            checked.context
            for binding in entries_read(check.bindings, GatekeeperBinding) or []
            if (
                checked := binding_check(
                    claim_id=check.claim_id,
                    ref_id=binding.ref_id,
                    excerpt=binding.excerpt,
                    sources=sources[correction.session_id],
                )
            ).status
            == VERIFIED
        ]
        if not windows:
            report.left_out["no verified excerpt"] += 1
            continue
        session = sessions[correction.session_id]
        report.written += 1
        yield {
            "claim": correction.claim_text,
            "evidence": "\n".join(windows),
            "label": correction.verdict,
            "lang": session.language if session.language in ("zh", "en") else "en",
            "domain": session.mode,
            "source": "selfeval",
            "project": session.project.slug,
            "sessionId": session.session_id,
            "claimId": correction.claim_id,
        }
