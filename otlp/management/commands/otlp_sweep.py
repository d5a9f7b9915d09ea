"""Safety net of OpenTelemetry ingestion; run it every minute beside evaluation_sweep."""

from dataclasses import replace
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser

from otlp.config import ReceiverConfig
from otlp.services.sweep import otlp_sweep


class Command(BaseCommand):
    help = (
        "Ingest, as partial sessions, traces whose root span has not arrived within the timeout (or expire "
        "them when their spans make no valid session), and purge the spans of traces ingested longer ago "
        "than the retention period. Safe to run concurrently and repeatedly."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        config = ReceiverConfig.from_settings()
        parser.add_argument(
            "--timeout-minutes",
            type=int,
            default=int(config.trace_timeout.total_seconds() // 60),
            help="a trace without its root this long after its last span is swept "
            "(default: SELFEVAL_OTLP_TRACE_TIMEOUT_MINUTES)",
        )
        parser.add_argument(
            "--retention-hours",
            type=int,
            default=int(config.span_retention.total_seconds() // 3600),
            help="spans of ingested traces are purged this long after their last span "
            "(default: SELFEVAL_OTLP_SPAN_RETENTION_HOURS)",
        )
        parser.add_argument("--limit", type=int, default=1000, help="at most this many traces of each kind per run")

    def handle(self, *args, **options) -> None:
        for name in ("timeout_minutes", "retention_hours", "limit"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1")
        config = replace(
            ReceiverConfig.from_settings(),
            trace_timeout=timedelta(minutes=options["timeout_minutes"]),
            span_retention=timedelta(hours=options["retention_hours"]),
        )
        result = otlp_sweep(config=config, limit=options["limit"])
        self.stdout.write(
            f"ingested {result.ingested} trace(s) without their root span (partial sessions), "
            f"expired {result.expired}, purged the spans of {result.purged}"
        )
