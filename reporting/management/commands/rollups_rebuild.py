"""Recompute the per-day rollups (`SessionDay`) from the sessions: after an upgrade, a bulk load
or any write that bypassed the services."""

import datetime as dt

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reporting.services.session_days import session_days_rebuild, session_days_span


def _date(value: str) -> dt.date:
    return dt.date.fromisoformat(value)


class Command(BaseCommand):
    help = "Rebuild the dashboard's per-day rollups of every day that has sessions, or of --since..--until."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", type=_date, help="first day (YYYY-MM-DD, in TIME_ZONE)")
        parser.add_argument("--until", type=_date, help="last day, included")

    def handle(self, *args, **options) -> None:
        span = session_days_span()
        first = options["since"] or (span[0] if span else None)
        last = options["until"] or (span[1] if span else None)
        if first is None or last is None:
            self.stdout.write("No sessions: nothing to rebuild.")
            return
        if first > last:
            raise CommandError(f"--since {first} is after --until {last}")
        stored = session_days_rebuild(first=first, last=last)
        self.stdout.write(f"Rebuilt {stored} day rows from {first} to {last}.")
