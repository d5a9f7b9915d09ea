"""`manage.py import_sessions`: JSON Lines of ingestion payloads into a project, as POST /api/sessions stores them."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.management.cli import Progress, project_from_slug, read_lines
from diagnosis.services.transfer import IMPORT_BATCH_SIZE, session_import_lines


class Command(BaseCommand):
    help = (
        "Read JSON Lines (one POST /api/sessions payload per line, as export_sessions writes them) into a "
        "project: each session is created or replaced and its evaluation enqueued, as the API does. A bad "
        "line is reported with its number and skipped, the others are stored; the exit status is 1 when "
        "any line was skipped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="slug of the (existing) project to import into")
        parser.add_argument("--input", default="-", help="file to read; '-' for stdin (the default)")
        parser.add_argument("--batch-size", type=int, default=IMPORT_BATCH_SIZE, help="sessions per transaction")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (none without a terminal)")

    def handle(self, *args, **options) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        project = project_from_slug(options["project"])
        with read_lines(options["input"]) as (stream, size):
            self._import(project, stream, total=size, options=options)

    def _import(self, project, stream, *, total: int | None, options: dict) -> None:
        created = replaced = skipped = 0
        with Progress(self, unit="B", desc="Importing", total=total, enabled=not options["no_progress"]) as progress:
            lines = _counted(stream, progress)
            for outcome in session_import_lines(project=project, lines=lines, batch_size=options["batch_size"]):
                if outcome.error:
                    skipped += 1
                    named = f" ({outcome.session_id})" if outcome.session_id else ""
                    progress.write(f"line {outcome.line}{named}: {outcome.error}")
                elif outcome.created:
                    created += 1
                else:
                    replaced += 1
        self.stdout.write(
            f"{created + replaced} session(s) imported into {project.slug}: {created} created, {replaced} replaced; "
            f"{skipped} line(s) skipped"
        )
        if skipped:
            raise CommandError(f"{skipped} line(s) skipped; fix them and import again (importing replaces)")


def _counted(stream, progress: Progress):
    """The stream's lines, advancing the bar by their bytes as they are read (a batch ahead of the writes)."""
    for raw in stream:
        progress.update(len(raw))
        yield raw
