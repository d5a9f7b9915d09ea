"""Reads of the case library, scoped to what the caller may see."""

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum

from django.db.models import Exists, OuterRef, Q, QuerySet

from cases.models import BadCase, BadCaseStatus, Case, CaseStatus
from core.tenancy.access import Access
from core.tenancy.models import Project
from diagnosis.models import ClaimCorrection, DiagnosisSession, EvaluationState, SessionReview
from diagnosis.selectors import session_list_for_export


def case_list(*, access: Access) -> QuerySet[Case]:
    return Case.objects.visible_to(access).select_related("project", "reviewed_by")


def case_search(
    *,
    access: Access,
    text: str = "",
    fault_category: str = "",
    service: str = "",
    error_code: str = "",
    status: str = "",
) -> QuerySet[Case]:
    """Cases matching every given criterion; `text` looks in title, query, root cause and solution.

    Category, service and error code are exact (case-insensitive for codes and services), each
    backed by an index ending in created_at.
    """
    cases = case_list(access=access)
    if text:
        cases = cases.filter(
            Q(title__icontains=text)
            | Q(query__icontains=text)
            | Q(root_cause__icontains=text)
            | Q(solution__icontains=text)
        )
    if fault_category:
        cases = cases.filter(fault_category=fault_category)
    if service:
        cases = cases.filter(service__iexact=service)
    if error_code:
        cases = cases.filter(error_code__iexact=error_code)
    if status:
        cases = cases.filter(status=status)
    return cases.order_by("-created_at", "-pk")


def case_list_approved() -> QuerySet[Case]:
    """Approved cases that still have their session: what `export_eval_fixtures` exports."""
    return Case.objects.filter(status=CaseStatus.APPROVED, session__isnull=False).select_related("session", "project")


def bad_case_list_triaged() -> QuerySet[BadCase]:
    """Bad cases a reviewer has categorised (triaged or fixed): what `export_eval_fixtures` exports."""
    return (
        BadCase.objects.filter(status__in=["triaged", "fixed"])
        .exclude(category="")
        .select_related("session", "project")
        .order_by("pk")
    )


def session_pks_with_cases(*, session_pks: Iterable[int]) -> set[int]:
    """The sessions among `session_pks` that a case (whatever its status: an approver decides it with
    its session at hand) or a bad case a person has triaged points to: the sessions retention keeps.
    An open bad case nobody touched (opened by a REJECT or a vote) goes with its session. One query."""
    session_pks = list(session_pks)
    with_case = Case.objects.filter(session_id__in=session_pks).order_by().values_list("session_id", flat=True)
    with_bad_case = (
        BadCase.objects.filter(session_id__in=session_pks)
        .exclude(status=BadCaseStatus.OPEN)
        .order_by()
        .values_list("session_id", flat=True)
    )
    return set(with_case.union(with_bad_case).order_by())


class DatasetSource(StrEnum):
    """Which sessions `export_eval_dataset` writes."""

    SESSIONS = "sessions"  # every evaluated session (evaluation done, or partial: a producer failed)
    CASES = "cases"  # sessions with an approved case: the reference answer is filled
    LABELLED = "labelled"  # sessions a person reviewed or whose claims a person corrected


def session_list_for_eval_dataset(
    *,
    source: DatasetSource,
    project: Project | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[DiagnosisSession]:
    """The sessions of `source` created in [since, until), of one project or of all, oldest first, ties by pk."""
    sessions = session_list_for_export(project=project, since=since, until=until)
    if source == DatasetSource.SESSIONS:
        return sessions.filter(evaluation_state__in=[EvaluationState.DONE, EvaluationState.PARTIAL])
    if source == DatasetSource.CASES:
        approved = Case.objects.filter(session_id=OuterRef("pk"), status=CaseStatus.APPROVED)
        return sessions.filter(Exists(approved))
    if source == DatasetSource.LABELLED:
        reviewed = SessionReview.objects.filter(session_id=OuterRef("pk"))
        corrected = ClaimCorrection.objects.filter(session_id=OuterRef("pk"))
        return sessions.filter(Exists(reviewed) | Exists(corrected))
    raise ValueError(f"unknown dataset source {source!r}")
