"""`manage.py export_sessions`: sessions as JSON Lines, one `POST /api/sessions` payload per line."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.management.cli import Progress, check_range, export_arguments, project_from_slug, write_lines
from diagnosis.selectors import session_list_for_export
from diagnosis.services.transfer import EXPORT_CHUNK_SIZE, session_export_lines


class Command(BaseCommand):
    help = (
        "Write sessions as JSON Lines: one ingestion payload per line (what POST /api/sessions and "
        "import_sessions accept), oldest first. Export, import into an empty database and export again "
        "gives the same bytes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        export_arguments(parser, by_time=True)
        parser.add_argument("--chunk-size", type=int, default=EXPORT_CHUNK_SIZE, help="sessions read per query")

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
