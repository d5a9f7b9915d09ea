"""Re-run the evaluation pipeline on chosen sessions, in batches, with a progress bar on stderr."""

from collections import Counter
from collections.abc import Iterator

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from diagnosis.management.cli import Progress, instant, project_from_slug
from diagnosis.models import (
    DiagnosisSession,
    EvaluationState,
    SessionMode,
    SessionStatus,
    VerifierVerdict,
)
from diagnosis.services.evaluation import session_evaluation_request, session_evaluation_run


class Command(BaseCommand):
    help = (
        "Re-run the evaluation of sessions chosen by sessionId (--ids with --project), by filters "
        "(--mode, --status, --verdict, --state, --since, optionally --project) or --all. Runs here, "
        "in batches, unless --enqueue hands them to the task workers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ids", nargs="+", metavar="SESSION_ID", help="sessionIds (needs --project)")
        parser.add_argument("--project", help="project slug")
        parser.add_argument("--mode", choices=SessionMode.values)
        parser.add_argument("--status", choices=SessionStatus.values, help="execution status")
        parser.add_argument("--verdict", choices=[*VerifierVerdict.values, "NONE"], help="verifier verdict")
        parser.add_argument("--state", choices=EvaluationState.values, help="evaluation state, e.g. FAILED")
        parser.add_argument("--since", type=instant, help="created at or after this date or ISO datetime")
        parser.add_argument("--all", action="store_true", help="every session")
        parser.add_argument("--batch-size", type=int, default=200)
        parser.add_argument("--enqueue", action="store_true", help="enqueue for the workers instead of running here")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (none without a terminal)")

    def handle(self, *args, **options) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        queryset = self._select(options)
        total = queryset.count()
        outcomes: Counter[str] = Counter()
        with Progress(
            self, unit="session", desc="Evaluating", total=total, enabled=not options["no_progress"]
        ) as progress:
            for batch in _pk_batches(queryset, options["batch_size"]):
                if options["enqueue"]:
                    outcomes["enqueued"] += session_evaluation_request(session_pks=batch)
                else:
                    # A manual re-run starts with a fresh attempt budget, also for FAILED sessions.
                    DiagnosisSession.objects.filter(pk__in=batch).update(evaluation_attempts=0)
                    for pk in batch:
                        outcomes[session_evaluation_run(session_pk=pk)] += 1
                progress.update(len(batch))
        summary = ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items())) or "nothing to do"
        self.stdout.write(f"{total} session(s): {summary}")

    def _select(self, options: dict) -> QuerySet[DiagnosisSession]:
        filters = [options[name] for name in ("mode", "status", "verdict", "state", "since")]
        chosen = [bool(options["ids"]), any(value is not None for value in filters), options["all"]]
        if sum(chosen) != 1:
            raise CommandError(
                "choose exactly one of: --ids, filters (--mode/--status/--verdict/--state/--since), --all"
            )
        queryset = DiagnosisSession.objects.all()
        if options["project"]:
            queryset = queryset.filter(project=project_from_slug(options["project"]))
        if options["ids"]:
            if not options["project"]:
                raise CommandError("--ids needs --project: sessionIds are unique only within a project")
            wanted = set(options["ids"])
            queryset = queryset.filter(session_id__in=wanted)
            missing = wanted - set(queryset.values_list("session_id", flat=True))
            if missing:
                raise CommandError(f"unknown sessionIds in {options['project']}: {', '.join(sorted(missing))}")
            return queryset
        if options["mode"]:
            queryset = queryset.filter(mode=options["mode"])
        if options["status"]:
            queryset = queryset.filter(status=options["status"])
        if options["verdict"]:
            queryset = queryset.filter(verifier_verdict="" if options["verdict"] == "NONE" else options["verdict"])
        if options["state"]:
            queryset = queryset.filter(evaluation_state=options["state"])
        if options["since"]:
            queryset = queryset.filter(created_at__gte=options["since"])
        return queryset


def _pk_batches(queryset: QuerySet[DiagnosisSession], size: int) -> Iterator[list[int]]:
    """Primary keys in ascending batches (keyset pagination: each batch is one indexed query)."""
    last = 0
    while True:
        batch = list(queryset.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:size])
        if not batch:
            return
        yield batch
        last = batch[-1]
