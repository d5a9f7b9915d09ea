"""`manage.py export_sessions`: sessions as JSON Lines, one `POST /api/sessions` payload per line."""

import os
from pathlib import Path
from typing import TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.management.cli import Progress, check_range, instant, project_from_slug
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
            if options["output"] == "-":
                written = _write(lines, self.stdout, progress)
            else:
                written = _write_file(lines, Path(options["output"]), progress)
        where = "stdout" if options["output"] == "-" else options["output"]
        # The summary goes to stderr: stdout may be the data itself.
        self.stderr.write(f"{written} session(s) exported to {where}")


def _write(lines, out: TextIO, progress: Progress) -> int:
    written = 0
    for line in lines:
        out.write(line + "\n")
        written += 1
        progress.update()
    return written


def _write_file(lines, path: Path, progress: Progress) -> int:
    """Write a regular file through `<name>.partial` renamed at the end, so a failed export never leaves
    half a file; anything else that exists there (a device, a pipe) is written to directly."""
    target = path.resolve()  # a symlink keeps pointing at the file it names
    direct = target.exists() and not target.is_file()
    partial = target if direct else target.with_name(f"{target.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as out:
            written = _write(lines, out, progress)
        if not direct:
            os.replace(partial, target)
    except OSError as exc:
        raise CommandError(f"--output: cannot write {path}: {exc}") from exc
    finally:
        if not direct:
            partial.unlink(missing_ok=True)  # gone already once renamed
    return written
