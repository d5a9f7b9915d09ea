"""Reviewer decisions as evaluation regression fixtures (tests/fixtures/eval format, "source": "reviewer").

What each decision asserts (only stated keys are checked by the harness):

    approved case, chat session     verdict PASS
    approved case, AIOps session    aiopsVerdict PASS
    bad case hallucination          verdict REJECT       (AIOps: aiopsVerdict FAIL)
    bad case wrong_root_cause       verdict REJECT       (AIOps: aiopsVerdict FAIL)
    bad case missing_evidence       verdict LOW_CONFID   (AIOps: aiopsVerdict WARN)
    bad case incomplete             verdict LOW_CONFID   (AIOps: aiopsVerdict WARN)
    bad case other                  not exported: the category states no expectation

Claim labels and gatekeeper statuses are exported only when the session's latest review says
the verifier was right (`SessionReview.verifier_was_right`): then the latest round's claim
verdicts and binding statuses are confirmed by a person and become labels. Exported bad cases
are those triaged or fixed with a category; approved cases need their session.
"""

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import Prefetch

from cases.models import BadCase, BadCaseCategory, Case
from cases.selectors import bad_case_list_triaged, case_list_approved
from core.tenancy.models import Project
from diagnosis.models import ClaimCheck, DiagnosisSession, SessionMode
from diagnosis.services.export import payload_prefetches, session_payload

_BAD_CASE_VERDICTS = {
    BadCaseCategory.HALLUCINATION: ("REJECT", "FAIL"),
    BadCaseCategory.WRONG_ROOT_CAUSE: ("REJECT", "FAIL"),
    BadCaseCategory.MISSING_EVIDENCE: ("LOW_CONFID", "WARN"),
    BadCaseCategory.INCOMPLETE: ("LOW_CONFID", "WARN"),
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class ExportResult:
    written: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def eval_fixtures_export(
    *, output: Path, project: Project | None = None, since: datetime | None = None
) -> ExportResult:
    """Write one JSON file per approved case and per triaged bad case into `output`.

    `project` keeps that project's decisions only; `since` keeps the decisions made at or after
    it: cases approved since (`reviewed_at`), bad cases whose triage last changed since
    (`updated_at`). File names derive from the case kind, project and sessionId, so exporting
    again overwrites the same files instead of adding copies.
    """
    output.mkdir(parents=True, exist_ok=True)
    result = ExportResult()
    cases = case_list_approved()
    bad_cases = bad_case_list_triaged()
    if project is not None:
        cases, bad_cases = cases.filter(project=project), bad_cases.filter(project=project)
    if since is not None:
        cases, bad_cases = cases.filter(reviewed_at__gte=since), bad_cases.filter(updated_at__gte=since)
    cases = list(cases.order_by("created_at", "pk"))
    bad_cases = list(bad_cases)
    sessions = _sessions_with_children({c.session_id for c in cases} | {b.session_id for b in bad_cases})
    for case in cases:
        fixture = eval_fixture_from_case(case=case, session=sessions[case.session_id])
        result.written.append(_write(output, fixture))
    for bad_case in bad_cases:
        fixture = eval_fixture_from_bad_case(bad_case=bad_case, session=sessions[bad_case.session_id])
        if fixture is None:
            result.skipped.append(f"bad case {bad_case.pk}: category {bad_case.category!r} states no expectation")
            continue
        result.written.append(_write(output, fixture))
    return result


def eval_fixture_from_case(*, case: Case, session: DiagnosisSession) -> dict[str, Any]:
    expected: dict[str, Any] = {"aiopsVerdict": "PASS"} if session.mode == SessionMode.AIOPS else {"verdict": "PASS"}
    return _fixture(
        name=f"reviewer-case-{session.project.slug}-{session.session_id}",
        description=f"Approved case {case.pk}: {case.title}",
        session=session,
        expected={**expected, **_confirmed_claims(session)},
    )


def eval_fixture_from_bad_case(*, bad_case: BadCase, session: DiagnosisSession) -> dict[str, Any] | None:
    verdicts = _BAD_CASE_VERDICTS.get(bad_case.category)
    if verdicts is None:
        return None
    verdict, aiops_verdict = verdicts
    expected: dict[str, Any] = (
        {"aiopsVerdict": aiops_verdict} if session.mode == SessionMode.AIOPS else {"verdict": verdict}
    )
    notes = f": {bad_case.notes[:200]}" if bad_case.notes else ""
    return _fixture(
        name=f"reviewer-badcase-{session.project.slug}-{session.session_id}",
        description=f"Bad case {bad_case.pk} ({bad_case.category}, from {bad_case.source}){notes}",
        session=session,
        expected={**expected, **_confirmed_claims(session)},
    )


def _confirmed_claims(session: DiagnosisSession) -> dict[str, Any]:
    reviews = list(session.reviews.all())
    if not reviews or reviews[0].verifier_was_right is not True:
        return {}
    checks = list(session.claim_checks.all())
    latest = max((c.round for c in checks), default=None)
    latest_checks = [c for c in checks if c.round == latest]
    if not latest_checks:
        return {}
    return {
        "claims": {c.claim_id: c.verdict for c in latest_checks},
        "gatekeeper": {
            c.claim_id: [b.get("status") for b in c.bindings if isinstance(b, dict)]
            for c in latest_checks
            if c.bindings
        },
    }


def _fixture(*, name: str, description: str, session: DiagnosisSession, expected: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": _UNSAFE.sub("_", name),
        "description": description,
        "language": session.language if session.language in ("zh", "en") else "en",
        "session": session_payload(session=session, with_self_evaluation=False),
        "expected": expected,
        "source": "reviewer",
    }


def _write(output: Path, fixture: dict[str, Any]) -> Path:
    path = output / f"{fixture['name']}.json"
    path.write_text(json.dumps(fixture, ensure_ascii=False, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def _sessions_with_children(pks: set[int]) -> dict[int, DiagnosisSession]:
    sessions = (
        DiagnosisSession.objects.filter(pk__in=pks)
        .select_related("project")
        .prefetch_related(
            *payload_prefetches(),
            Prefetch("claim_checks", queryset=ClaimCheck.objects.order_by("round", "id")),
            "reviews",
        )
    )
    return {session.pk: session for session in sessions}
