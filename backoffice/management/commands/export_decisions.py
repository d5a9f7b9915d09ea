"""`manage.py export_decisions`: people's decisions (feedback, cases, bad cases, reviews, claim corrections) as JSON Lines."""

from django.core.management.base import BaseCommand, CommandParser

from backoffice.decisions import decision_export_lines
from diagnosis.management.cli import Progress, export_arguments, project_from_slug, write_lines


class Command(BaseCommand):
    help = (
        'Write what people decided as JSON Lines, one record a line ({"kind": "case", ...}): the sessions\' '
        "feedback and review state, feedback events, end users' votes, cases with their review and revisions, "
        "bad cases with their triage, reviews, claim corrections. The sessions travel with export_sessions. Export, import into "
        "a database holding the same sessions and export again gives the same bytes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        export_arguments(parser)

    def handle(self, *args, **options) -> None:
        project = project_from_slug(options["project"]) if options["project"] else None
        with Progress(self, unit="record", desc="Exporting", enabled=not options["no_progress"]) as progress:
            lines = decision_export_lines(project=project)
            written = write_lines(lines, output=options["output"], stdout=self.stdout, progress=progress)
        where = "stdout" if options["output"] == "-" else options["output"]
        # The summary goes to stderr: stdout may be the data itself.
        self.stderr.write(f"{written} record(s) exported to {where}")
