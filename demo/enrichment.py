"""Everything that happens to sessions after ingestion, run on demo sessions through the real services.

Evaluation (every layer), end-user feedback (cases and bad cases follow from it), case approvals,
bad-case triage and reviewer judgements: the admin dashboard shows a realistic back office.
Services owned by other apps are imported lazily so a partial checkout still seeds sessions.
"""

import logging
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from demo.generator import DemoSession
from demo.users import demo_users_ensure
from diagnosis.models import ClaimCheck, DiagnosisSession

logger = logging.getLogger(__name__)

_BAD_CASE_CATEGORY = {
    "fabricated_excerpt": "hallucination",
    "altered_number": "hallucination",
    "absence_claim": "hallucination",
    "unknown_ref": "hallucination",
    "no_hit": "missing_evidence",
    "all_calls_failed": "missing_evidence",
    "no_tool_calls": "missing_evidence",
    "ref_from_failed_call": "missing_evidence",
    "aiops_unrelated_alert": "wrong_root_cause",
    "aiops_no_report": "incomplete",
    "aiops_misread_metric": "hallucination",
    "invalid_executor_output": "other",
}


@dataclass
class EnrichResult:
    evaluated: Counter = field(default_factory=Counter)
    evaluation_errors: list[str] = field(default_factory=list)
    feedback: Counter = field(default_factory=Counter)
    cases: Counter = field(default_factory=Counter)
    bad_cases_triaged: int = 0
    reviews: int = 0
    claim_corrections: int = 0
    verifications: int = 0
    skipped: list[str] = field(default_factory=list)


def demo_sessions_evaluate(*, session_pks: list[int], result: EnrichResult, progress: Callable | None = None) -> None:
    """Run the real evaluation on every session; a failing session is counted, not fatal.

    When the first ten sessions all fail the evaluation is taken to be broken (a half-built
    checkout, say) and the rest are left PENDING for `evaluation_sweep` instead of failing too.
    """
    from diagnosis.services.evaluation import session_evaluate

    for done, pk in enumerate(session_pks, start=1):
        try:
            result.evaluated[str(session_evaluate(session_pk=pk))] += 1
        except Exception as exc:  # noqa: BLE001 (one broken session must not stop a demo seed)
            result.evaluated["ERROR"] += 1
            if len(result.evaluation_errors) < 3:
                result.evaluation_errors.append(f"session pk {pk}: {exc.__class__.__name__}: {exc}")
                logger.warning(
                    "demo evaluation failed for session pk %s", pk, exc_info=not result.evaluation_errors[1:]
                )
            if done == 10 and result.evaluated["ERROR"] == 10:
                result.evaluated["NOT_RUN"] = len(session_pks) - done
                return
        if progress and (done % 500 == 0 or done == len(session_pks)):
            progress(done, len(session_pks))


def demo_sessions_enrich(*, demos: list[DemoSession], session_pks: list[int], result: EnrichResult) -> None:
    """Feedback, case decisions, bad-case triage and reviews for freshly seeded demo sessions."""
    try:
        from cases.services import bad_case_update, case_approve, case_reject
        from core.tenancy.access import Access
        from feedback.services import FeedbackSubmitter, feedback_submit
    except ImportError as exc:
        result.skipped.append(f"feedback and cases ({exc})")
        return
    users = demo_users_ensure(set_passwords=False)
    reviewer, approver = users["reviewer"], users["approver"]
    sessions = DiagnosisSession.objects.in_bulk(session_pks)
    for demo, pk in zip(demos, session_pks, strict=True):
        session = sessions[pk]
        rng = random.Random(f"selfeval-demo-enrich:{demo.session_id}")
        if demo.feedback:
            end_user = FeedbackSubmitter(
                access=Access.to_project(session.project_id),
                client="token",
                end_user_id=f"demo-user-{rng.randrange(500)}",
                session_pk=session.pk,
                session_id=session.session_id,
            )
            outcome = feedback_submit(submitter=end_user, session_id=session.session_id, value=demo.feedback)
            result.feedback[demo.feedback] += 1
            if outcome.case is not None:
                roll = rng.random()
                if roll < 0.5:
                    case_approve(case=outcome.case, user=approver, note="Checked against the runbook.")
                    result.cases["approved"] += 1
                elif roll < 0.65:
                    case_reject(case=outcome.case, user=approver, note="Answer too generic for the library.")
                    result.cases["rejected"] += 1
                else:
                    result.cases["pending"] += 1
    _triage_bad_cases(demos, session_pks, reviewer, bad_case_update, result)
    _review_some(demos, session_pks, reviewer, result)
    _verify_new_answers(session_pks, result)


def _triage_bad_cases(demos, session_pks, reviewer, bad_case_update, result: EnrichResult) -> None:
    from cases.models import BadCase

    scenario_of = {pk: demo for demo, pk in zip(demos, session_pks, strict=True)}
    for bad_case in BadCase.objects.filter(session_id__in=session_pks, status="open").order_by("pk"):
        demo = scenario_of[bad_case.session_id]
        rng = random.Random(f"selfeval-demo-triage:{demo.session_id}")
        roll = rng.random()
        if roll > 0.5:
            continue
        status = "fixed" if roll < 0.1 else "triaged"
        bad_case_update(
            bad_case=bad_case,
            user=reviewer,
            status=status,
            category=_BAD_CASE_CATEGORY.get(demo.scenario, "other"),
            assignee=reviewer,
            notes="Prompt and retrieval fixed in v2.4."
            if status == "fixed"
            else "Reproduced; evidence does not back it.",
        )
        result.bad_cases_triaged += 1


def _review_some(demos, session_pks, reviewer, result: EnrichResult) -> None:
    try:
        from diagnosis.services.reviews import JUDGE_RIGHT, claim_correction_record, session_mark_reviewed
    except ImportError as exc:
        result.skipped.append(f"reviews ({exc})")
        return
    good = {"grounded_l0", "grounded_l1", "partial_failure", "aiops_focused", "aiops_metrics_failed"}
    sessions = DiagnosisSession.objects.in_bulk(session_pks)
    for demo, pk in zip(demos, session_pks, strict=True):
        rng = random.Random(f"selfeval-demo-review:{demo.session_id}")
        session = sessions[pk]
        if rng.random() > 0.12 or session.status != "SUCCEEDED":
            continue
        judgement = "correct" if demo.scenario in good else rng.choice(["wrong", "partly_correct"])
        verdict = session.verifier_verdict
        verifier_right = None if not verdict else (verdict == "PASS") == (judgement == "correct")
        session_mark_reviewed(
            session=session,
            reviewer=reviewer,
            judgement=judgement,
            verifier_was_right=verifier_right,
            notes="Demo review." if judgement == "correct" else "Claims go beyond the cited evidence.",
        )
        result.reviews += 1
        # Claim by claim: on an answer the reviewer found correct, a claim the judge doubted was a judge
        # error; on a wrong one, a critical claim the judge let through was not backed after all.
        latest = ClaimCheck.objects.filter(session_id=pk).order_by("-round").values_list("round", flat=True)[:1]
        for check in ClaimCheck.objects.filter(session_id=pk, round__in=latest).order_by("claim_id"):
            if judgement == "correct" and check.verdict in ("UNSUPPORTED", "CONTRADICTED"):
                verdict, note = "SUPPORTED", "Stated in the cited tool output, in other words."
            elif judgement == "wrong" and check.critical and check.verdict == "SUPPORTED":
                verdict, note = "UNSUPPORTED", "The excerpt names the symptom, not this cause."
            else:
                verdict, note = JUDGE_RIGHT, ""
            claim_correction_record(
                session=session, reviewer=reviewer, claim_id=check.claim_id, verdict=verdict, note=note
            )
            result.claim_corrections += 1


# Sessions whose answer is compared with an older, shorter version of it (the evolution log).
VERIFIED_ANSWERS = 6


def _verify_new_answers(session_pks, result: EnrichResult) -> None:
    """The evolution verification agent on a few answers against an older version of each (their
    first paragraph, as an earlier prompt answered): the evolution log has rows to read."""
    try:
        from evolution.models import VerificationSource
        from evolution.services.verification import evolution_verify
    except ImportError as exc:
        result.skipped.append(f"evolution verifications ({exc})")
        return
    sessions = (
        DiagnosisSession.objects.filter(pk__in=session_pks, status="SUCCEEDED")
        .exclude(answer="")
        .select_related("project")
        .order_by("created_at", "pk")
    )
    chosen: list[DiagnosisSession] = []
    for mode, language in (("chat", "zh"), ("chat", "en"), ("aiops", "zh"), ("aiops", "en")):
        chosen += [s for s in sessions if s.mode == mode and s.language == language][: VERIFIED_ANSWERS // 4 + 1]
    for session in chosen[:VERIFIED_ANSWERS]:
        rng = random.Random(f"selfeval-demo-evolution:{session.session_id}")
        evolution_verify(
            query=session.query,
            old_response=_older_answer(session.answer),
            new_response=session.answer,
            user_feedback={"satisfaction": rng.randint(2, 5), "comments": ""},
            lang=session.language if session.language in ("zh", "en") else None,
            compare_competitors=False,
            source=VerificationSource.PIPELINE,
            project=session.project,
        )
        result.verifications += 1


def _older_answer(answer: str) -> str:
    """The answer's first paragraph of prose, without its headings, lists and evidence."""
    for paragraph in answer.split("\n\n"):
        text = paragraph.strip()
        if text and not text.startswith(("#", "-", "*", "|", "```", ">")) and not text[0].isdigit():
            return text
    return answer.splitlines()[0].lstrip("#-* ") if answer.strip() else answer
