"""Sessions, approved cases and people's labels as a dataset for evaluation tools (`export_eval_dataset`).

One `EvalSample` per session: the query, the answer, the retrieved contexts (the contents of the
session's evidence refs, in the order the agent reported them), SelfEval's verdicts, the reviewed
reference answer of the session's approved case, the latest review and the newest correction of
each claim. `cases.services.eval_formats` writes the samples in each tool's shape; `sample_metadata`
here is the one writer of what SelfEval adds beside the tools' own fields.

The sessions are read from one cursor `chunk_size` at a time, each chunk's evidence refs, approved
cases, reviews and claim corrections in four more queries (1 + 4 statements a chunk, whatever its
sessions), in the order of `cases.selectors.session_list_for_eval_dataset` (oldest first, ties by
pk), so two exports of the same data are the same bytes.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch, QuerySet

from cases.models import Case, CaseStatus
from diagnosis.models import ClaimCorrection, DiagnosisSession, EvidenceRef, SessionReview
from diagnosis.services.export import instant_text

EXPORT_CHUNK_SIZE = 500

# The session columns a sample reads.
SAMPLE_FIELDS = (
    "pk",
    "project__slug",
    "session_id",
    "mode",
    "language",
    "query",
    "answer",
    "created_at",
    "verifier_verdict",
    "groundedness_score",
    "evidence_score",
    "aiops_verdict",
    "failure_attribution",
    "evaluation_state",
)


@dataclass(frozen=True, slots=True)
class ContextRef:
    ref_id: str
    source: str


@dataclass(frozen=True, slots=True)
class CaseLabel:
    """The session's approved case: what the approver accepted as the answer."""

    case_id: str
    title: str
    root_cause: str
    solution: str
    fault_category: str
    reviewed_at: str | None


@dataclass(frozen=True, slots=True)
class ReviewLabel:
    """The session's latest review (`SessionReview`): the reviewer's judgement of the answer and of the verifier."""

    judgement: str
    verifier_was_right: bool | None
    verifier_verdict: str | None
    notes: str
    created_at: str | None


@dataclass(frozen=True, slots=True)
class ClaimLabel:
    """The newest `ClaimCorrection` of one claim: the judge's verdict and the people's."""

    claim_id: str
    round: int
    claim: str
    judge_verdict: str
    verdict: str
    decided_by: str | None
    band: str | None
    created_at: str | None


@dataclass(frozen=True, slots=True)
class EvalSample:
    project: str
    session_id: str
    mode: str
    language: str
    created_at: str | None
    query: str
    answer: str
    contexts: tuple[str, ...]
    context_refs: tuple[ContextRef, ...]
    verifier_verdict: str | None
    groundedness: float | None
    evidence_score: int | None
    aiops_verdict: str | None
    failure_attribution: str | None
    evaluation_state: str
    case: CaseLabel | None
    review: ReviewLabel | None
    claim_corrections: tuple[ClaimLabel, ...]

    @property
    def reference(self) -> str | None:
        """The reviewed reference answer: the approved case's root cause and solution (one of them when
        they are the same text, as when both fell back to the answer), None without an approved case."""
        if self.case is None:
            return None
        parts: list[str] = []
        for text in (self.case.root_cause.strip(), self.case.solution.strip()):
            if text and text not in parts:
                parts.append(text)
        return "\n\n".join(parts) or None


def eval_samples(*, sessions: QuerySet[DiagnosisSession], chunk_size: int = EXPORT_CHUNK_SIZE) -> Iterator[EvalSample]:
    """One sample per session, in the queryset's order, `chunk_size` sessions per query."""
    rows = sessions.select_related("project").only(*SAMPLE_FIELDS).prefetch_related(*_sample_prefetches())
    for session in rows.iterator(chunk_size=chunk_size):
        yield _sample(session)


def _sample_prefetches() -> tuple[Prefetch, ...]:
    """Four queries for any number of sessions: refs, approved cases, reviews, claim corrections."""
    return (
        Prefetch(
            "evidence_refs",
            queryset=EvidenceRef.objects.order_by("invocation__position", "position").only(
                "session_id", "ref_id", "source", "content"
            ),
            to_attr="ordered_refs",
        ),
        Prefetch(
            "cases",
            queryset=Case.objects.filter(status=CaseStatus.APPROVED).only(
                "id", "session_id", "title", "root_cause", "solution", "fault_category", "reviewed_at"
            ),
            to_attr="approved_cases",
        ),
        Prefetch(
            "reviews",
            queryset=SessionReview.objects.order_by("-created_at", "-id").only(
                "session_id", "judgement", "verifier_was_right", "verifier_verdict", "notes", "created_at"
            ),
            to_attr="newest_reviews",
        ),
        Prefetch(
            "claim_corrections",
            queryset=ClaimCorrection.objects.order_by("claim_id", "-created_at", "-id").only(
                "session_id",
                "round",
                "claim_id",
                "claim_text",
                "judge_verdict",
                "verdict",
                "decided_by",
                "band",
                "created_at",
            ),
            to_attr="corrections_by_claim",
        ),
    )


def _sample(session: DiagnosisSession) -> EvalSample:
    refs = session.ordered_refs
    case = session.approved_cases[0] if session.approved_cases else None  # one case per session at most
    review = session.newest_reviews[0] if session.newest_reviews else None
    newest: dict[str, ClaimCorrection] = {}
    for correction in session.corrections_by_claim:  # newest first within each claim
        newest.setdefault(correction.claim_id, correction)
    return EvalSample(
        project=session.project.slug,
        session_id=session.session_id,
        mode=session.mode,
        language=session.language,
        created_at=instant_text(session.created_at),
        query=session.query,
        answer=session.answer,
        contexts=tuple(ref.content for ref in refs),
        context_refs=tuple(ContextRef(ref_id=ref.ref_id, source=ref.source) for ref in refs),
        verifier_verdict=session.verifier_verdict or None,
        groundedness=session.groundedness_score,
        evidence_score=session.evidence_score,
        aiops_verdict=session.aiops_verdict or None,
        failure_attribution=session.failure_attribution or None,
        evaluation_state=session.evaluation_state,
        case=None
        if case is None
        else CaseLabel(
            case_id=str(case.pk),
            title=case.title,
            root_cause=case.root_cause,
            solution=case.solution,
            fault_category=case.fault_category,
            reviewed_at=instant_text(case.reviewed_at),
        ),
        review=None
        if review is None
        else ReviewLabel(
            judgement=review.judgement,
            verifier_was_right=review.verifier_was_right,
            verifier_verdict=review.verifier_verdict or None,
            notes=review.notes,
            created_at=instant_text(review.created_at),
        ),
        claim_corrections=tuple(
            ClaimLabel(
                claim_id=c.claim_id,
                round=c.round,
                claim=c.claim_text,
                judge_verdict=c.judge_verdict,
                verdict=c.verdict,
                decided_by=c.decided_by or None,
                band=c.band or None,
                created_at=instant_text(c.created_at),
            )
            for c in newest.values()
        ),
    )


def sample_metadata(sample: EvalSample) -> dict[str, Any]:
    """What SelfEval knows of the sample beyond the tools' own fields, camelCase as the other exports.

    `evidenceRefs` names the retrieved contexts, in their order. Reviewers are not named: a dataset
    leaves the back office, and who labelled a sample does not change what it says.
    """
    return {
        "project": sample.project,
        "sessionId": sample.session_id,
        "mode": sample.mode,
        "language": sample.language,
        "createdAt": sample.created_at,
        "evidenceRefs": [{"refId": ref.ref_id, "source": ref.source} for ref in sample.context_refs],
        "verifierVerdict": sample.verifier_verdict,
        "groundedness": sample.groundedness,
        "evidenceScore": sample.evidence_score,
        "aiopsVerdict": sample.aiops_verdict,
        "failureAttribution": sample.failure_attribution,
        "evaluationState": sample.evaluation_state,
        "case": None
        if sample.case is None
        else {
            "id": sample.case.case_id,
            "title": sample.case.title,
            "rootCause": sample.case.root_cause,
            "solution": sample.case.solution,
            "faultCategory": sample.case.fault_category,
            "reviewedAt": sample.case.reviewed_at,
        },
        "review": None
        if sample.review is None
        else {
            "judgement": sample.review.judgement,
            "verifierWasRight": sample.review.verifier_was_right,
            "verifierVerdict": sample.review.verifier_verdict,
            "notes": sample.review.notes,
            "createdAt": sample.review.created_at,
        },
        "claimCorrections": [
            {
                "claimId": c.claim_id,
                "round": c.round,
                "claim": c.claim,
                "judgeVerdict": c.judge_verdict,
                "verdict": c.verdict,
                "decidedBy": c.decided_by,
                "band": c.band,
                "createdAt": c.created_at,
            }
            for c in sample.claim_corrections
        ],
    }
