"""The periodic safety net of background evaluation (`manage.py evaluation_sweep`, every minute).

The database task backend retries nothing by itself and leaves a task RUNNING for ever when its
worker is killed; an in-process evaluation dies with its process. The sweep finds what fell
through: evaluation tasks stuck RUNNING (reclaimed: marked failed, one failed attempt counted,
the session retried), sessions PENDING for too long with no task queued for them, and evaluated
sessions whose layers are missing, left over from a mode they no longer have, or older than
the session (`evaluated_at < updated_at`).
FAILED sessions are left alone: they used up their attempts and wait for `reevaluate`.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F, Q
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from diagnosis.constants import Layer
from diagnosis.evaluation_layers import LEGACY_SOURCE
from diagnosis.models import DiagnosisSession, EvaluationState, SessionMode
from diagnosis.services.evaluation import session_evaluation_record_failure, session_evaluation_request


@dataclass(frozen=True)
class SweepResult:
    reclaimed_tasks: int = 0
    failed_sessions: int = 0
    pending_requeued: int = 0
    stale_requeued: int = 0


def _task_path() -> str:
    from diagnosis.tasks import evaluate_session

    return evaluate_session.module_path


def _session_pk(args_kwargs: Any) -> int | None:
    args = (args_kwargs or {}).get("args") or []
    kwargs = (args_kwargs or {}).get("kwargs") or {}
    value = args[0] if args else kwargs.get("session_pk")
    return value if isinstance(value, int) else None


def evaluation_sweep(
    *, pending_older_than: timedelta, stuck_after: timedelta, limit: int = 1000, now: datetime | None = None
) -> SweepResult:
    """Reclaim stuck evaluation tasks and re-enqueue forgotten or stale sessions (at most `limit` each)."""
    now = now or timezone.now()
    reclaimed, failed, retried = _reclaim_stuck_tasks(now - stuck_after, limit, now)
    pending = _forgotten_pending(now - pending_older_than, limit, exclude=retried)
    stale = _stale_or_incomplete(limit)
    # The sweep keeps the attempt count, so a session that keeps failing still ends FAILED.
    session_evaluation_request(session_pks=pending + stale, reset_attempts=False)
    return SweepResult(
        reclaimed_tasks=reclaimed, failed_sessions=failed, pending_requeued=len(pending), stale_requeued=len(stale)
    )


def _reclaim_stuck_tasks(started_before: datetime, limit: int, now: datetime) -> tuple[int, int, set[int]]:
    stuck = list(
        DBTaskResult.objects.running()
        .filter(task_path=_task_path(), started_at__lt=started_before)
        .order_by("started_at")
        .values_list("pk", "args_kwargs", "started_at")[:limit]
    )
    reclaimed = failed = 0
    retried: set[int] = set()
    for task_pk, args_kwargs, started_at in stuck:
        # Conditional on RUNNING: a worker that was merely slow and finishes now keeps its result.
        won = DBTaskResult.objects.filter(pk=task_pk, status=TaskResultStatus.RUNNING).update(
            status=TaskResultStatus.FAILED,
            finished_at=now,
            exception_class_path="diagnosis.services.evaluation_sweep.WorkerLost",
            traceback=f"Reclaimed by evaluation_sweep: RUNNING since {started_at.isoformat()}, worker presumed lost.",
        )
        session_pk = _session_pk(args_kwargs)
        if not won or session_pk is None:
            continue
        reclaimed += 1
        outcome = session_evaluation_record_failure(
            session_pk=session_pk, error=f"worker lost: task {task_pk} RUNNING since {started_at.isoformat()}"
        )
        if outcome == EvaluationState.FAILED:
            failed += 1
        elif outcome == "RETRY_NOW":
            session_evaluation_request(session_pks=[session_pk], reset_attempts=False)
        retried.add(session_pk)
    return reclaimed, failed, retried


def _forgotten_pending(requested_before: datetime, limit: int, exclude: set[int]) -> list[int]:
    candidates = list(
        DiagnosisSession.objects.filter(evaluation_state=EvaluationState.PENDING)
        .filter(
            Q(evaluation_requested_at__lt=requested_before)
            | Q(evaluation_requested_at__isnull=True, updated_at__lt=requested_before)
        )
        .exclude(pk__in=exclude)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    if not candidates:
        return []
    # A session whose task is still queued (a backlog, or a retry deferred by backoff) or running
    # is not forgotten: enqueueing it again would only lengthen the queue.
    busy = set(
        DBTaskResult.objects.filter(
            task_path=_task_path(),
            status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
            args_kwargs__args__0__in=candidates,
        ).values_list("args_kwargs__args__0", flat=True)
    )
    return [pk for pk in candidates if pk not in busy]


def _stale_or_incomplete(limit: int) -> list[int]:
    """Evaluated sessions changed since (outside ingestion) or, when DONE, whose layers are not
    exactly the ones that apply (pipeline.applicable_layers): one missing, or one left over."""
    verifier_applies = Q(mode=SessionMode.CHAT) | Q(executor_output__isnull=False)
    aiops_applies = Q(mode=SessionMode.AIOPS)
    # A legacy verifier layer is kept where no producer replaces it (evaluation_layers): it is not
    # a producer's layer, neither missing nor left over. (`source__isnull` is "no source key".)
    has_verifier = Q(self_evaluation__has_key=Layer.VERIFIER) & (
        Q(self_evaluation__verifier_evaluation__source__isnull=True)
        | ~Q(self_evaluation__verifier_evaluation__source=LEGACY_SOURCE)
    )
    has_aiops = Q(self_evaluation__has_key=Layer.AIOPS)
    missing_layer = (
        ~Q(self_evaluation__has_key=Layer.RULE)
        | (verifier_applies & ~has_verifier)
        | (aiops_applies & ~has_aiops)
        | (~verifier_applies & has_verifier)
        | (~aiops_applies & has_aiops)
    )
    return list(
        DiagnosisSession.objects.filter(
            Q(evaluation_state__in=[EvaluationState.DONE, EvaluationState.PARTIAL])
            & (Q(evaluated_at__isnull=True) | Q(evaluated_at__lt=F("updated_at")))
            | Q(evaluation_state=EvaluationState.DONE) & missing_layer
        )
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
