"""Safety net of background evaluation; run it every minute (cron, systemd timer, k8s CronJob)."""

from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.services.evaluation_sweep import evaluation_sweep


class Command(BaseCommand):
    help = (
        "Reclaim evaluation tasks stuck RUNNING (killed worker), re-enqueue sessions PENDING for too "
        "long and sessions whose layers are missing or stale. Safe to run concurrently and repeatedly."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--pending-minutes",
            type=int,
            default=settings.SELFEVAL_SWEEP_PENDING_MINUTES,
            help="re-enqueue sessions PENDING for longer than this (default: SELFEVAL_SWEEP_PENDING_MINUTES)",
        )
        parser.add_argument(
            "--stuck-minutes",
            type=int,
            default=settings.SELFEVAL_SWEEP_STUCK_TASK_MINUTES,
            help="reclaim tasks RUNNING for longer than this (default: SELFEVAL_SWEEP_STUCK_TASK_MINUTES)",
        )
        parser.add_argument("--limit", type=int, default=1000, help="at most this many sessions of each kind per run")

    def handle(self, *args, **options) -> None:
        for name in ("pending_minutes", "stuck_minutes", "limit"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1")
        result = evaluation_sweep(
            pending_older_than=timedelta(minutes=options["pending_minutes"]),
            stuck_after=timedelta(minutes=options["stuck_minutes"]),
            limit=options["limit"],
        )
        self.stdout.write(
            f"reclaimed {result.reclaimed_tasks} stuck task(s) ({result.failed_sessions} session(s) now FAILED), "
            f"re-enqueued {result.pending_requeued} pending and {result.stale_requeued} stale session(s)"
        )
