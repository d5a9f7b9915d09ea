"""`manage.py export_sessions`: sessions as JSON Lines, one `POST /api/sessions` payload per line."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.management.cli import Progress, check_range, instant, project_from_slug, write_lines
from diagnosis.selectors import session_list_for_export
from diagnosis.services.transfer import EXPORT_CHUNK_SIZE, session_export_lines


class Command(BaseCommand):
    help = (
        "Write sessions as JSON Lines: one ingestion payload per line (what POST /api/sessions and "
        "import_sessions accept), oldest first. Export, import into an empty database and export again "
        "gives the same bytes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", help="project slug (default: every project)")
        parser.add_argument("--since", type=instant, help="created at or after this date or ISO datetime")
        parser.add_argument("--until", type=instant, help="created before this date or ISO datetime")
        parser.add_argument(
            "--output", default="-", help="file to write (replaced when the export is complete); '-' for stdout"
        )
        parser.add_argument("--chunk-size", type=int, default=EXPORT_CHUNK_SIZE, help="sessions read per query")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (none without a terminal)")

    def handle(self, *args, **options) -> None:
        if options["chunk_size"] < 1:
            raise CommandError("--chunk-size must be at least 1")
        check_range(options["since"], options["until"])
        project = project_from_slug(options["project"]) if options["project"] else None
        sessions = session_list_for_export(project=project, since=options["since"], until=options["until"])
        with Progress(self, unit="session", desc="Exporting", enabled=not options["no_progress"]) as progress:
            if progress.active:
                progress.set_total(sessions.count())
            lines = session_export_lines(sessions=sessions, chunk_size=options["chunk_size"])
            written = write_lines(lines, output=options["output"], stdout=self.stdout, progress=progress)
        where = "stdout" if options["output"] == "-" else options["output"]
        # The summary goes to stderr: stdout may be the data itself.
        self.stderr.write(f"{written} session(s) exported to {where}")
