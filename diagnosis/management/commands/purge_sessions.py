"""Delete old sessions with every row that belongs to them; what a person curated stays."""

import argparse

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.management.cli import project_from_slug
from diagnosis.services.retention import PURGE_BATCH_SESSIONS, sessions_purge


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return int(value)


class Command(BaseCommand):
    help = (
        "Delete the sessions created more than DAYS days ago (--older-than, else SELFEVAL_RETENTION_DAYS) "
        "with their invocations, refs, steps, checks, reviews and feedback, in batches. Sessions a case "
        "or a bad case points to are kept. --dry-run prints what would go and deletes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=_positive, metavar="DAYS", help="age in days (default: the setting)")
        parser.add_argument("--project", help="project slug (default: every project)")
        parser.add_argument("--dry-run", action="store_true", help="count what would be deleted, delete nothing")
        parser.add_argument(
            "--batch-size", type=_positive, default=PURGE_BATCH_SESSIONS, help="sessions per transaction"
        )

    def handle(self, *args, **options) -> None:
        days = options["older_than"] or settings.SELFEVAL_RETENTION_DAYS
        if not days:
            raise CommandError("how old must a session be to go? Pass --older-than DAYS or set SELFEVAL_RETENTION_DAYS")
        project = project_from_slug(options["project"]) if options["project"] else None
        report = sessions_purge(
            older_than_days=days, project=project, dry_run=options["dry_run"], batch_size=options["batch_size"]
        )
        scope = f"of {project.slug} " if project else ""
        verb = "would delete" if report.dry_run else "deleted"
        self.stdout.write(f"Sessions {scope}created before {report.cutoff.isoformat()} ({days} days): {verb}")
        for label, count in report.removed.items():
            self.stdout.write(f"  {label}: {count}")
        self.stdout.write(f"Kept {report.kept} old session(s) that a case or a bad case points to.")
