"""`manage.py import_decisions`: the records `export_decisions` writes, stored as they are, all or nothing."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backoffice.decisions import DecisionImport, decision_import_lines
from diagnosis.management.cli import read_lines


class Command(BaseCommand):
    help = (
        "Read decision records (JSON Lines, as export_decisions writes them) into the sessions they name, which "
        "must exist (import_sessions first). Stored state is written as it is, not replayed: no vote opens a "
        "case. One transaction: a refused line is reported with its number and field, and nothing is imported. "
        "Unknown usernames become inactive users without a password. Importing again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", default="-", help="file to read; '-' for stdin (the default)")

    def handle(self, *args, **options) -> None:
        with read_lines(options["input"]) as (stream, _):
            report = decision_import_lines(lines=stream)
        for error in report.errors:
            self.stderr.write(error)
        if report.errors:
            raise CommandError(f"{len(report.errors)} line(s) refused; nothing was imported")
        self.stdout.write(_summary(report))


def _summary(report: DecisionImport) -> str:
    kinds = sorted(set(report.stored) | set(report.unchanged))
    counts = ", ".join(f"{kind} {report.stored[kind]} stored / {report.unchanged[kind]} unchanged" for kind in kinds)
    users = ", ".join(sorted(report.created_users)) or "none"
    return f"{report.stored.total()} record(s) stored, {report.unchanged.total()} unchanged ({counts or 'no records'}); users created inactive: {users}"
