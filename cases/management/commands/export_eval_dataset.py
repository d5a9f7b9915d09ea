"""`manage.py export_eval_dataset`: sessions, approved cases and people's labels for Ragas, DeepEval or promptfoo."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cases.selectors import DatasetSource
from cases.services.eval_dataset import EXPORT_CHUNK_SIZE
from cases.services.eval_formats import DatasetFormat, eval_dataset_lines
from diagnosis.management.cli import Progress, check_range, export_arguments, project_from_slug, write_lines


class Command(BaseCommand):
    help = (
        "Write sessions as a dataset for an evaluation tool: query, answer, retrieved contexts, SelfEval's "
        "verdicts, the approved case's reference answer and people's labels (latest review, newest claim "
        "corrections). --format ragas (JSON Lines of SingleTurnSample), deepeval (a JSON array of goldens) "
        "or promptfoo (a JSON array of test cases). Oldest first; the same data gives the same bytes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", required=True, choices=[f.value for f in DatasetFormat], help="output shape")
        parser.add_argument(
            "--source",
            default=DatasetSource.SESSIONS.value,
            choices=[s.value for s in DatasetSource],
            help="sessions: every evaluated session (default); cases: those with an approved case; "
            "labelled: those with a review or a claim correction",
        )
        export_arguments(parser, by_time=True)
        parser.add_argument("--chunk-size", type=int, default=EXPORT_CHUNK_SIZE, help="sessions read per query")

    def handle(self, *args, **options) -> None:
        if options["chunk_size"] < 1:
            raise CommandError("--chunk-size must be at least 1")
        check_range(options["since"], options["until"])
        project = project_from_slug(options["project"]) if options["project"] else None
        lines = eval_dataset_lines(
            dataset_format=DatasetFormat(options["format"]),
            source=DatasetSource(options["source"]),
            project=project,
            since=options["since"],
            until=options["until"],
            chunk_size=options["chunk_size"],
        )
        with Progress(self, unit="line", desc="Exporting", enabled=not options["no_progress"]) as progress:
            written = write_lines(lines, output=options["output"], stdout=self.stdout, progress=progress)
        where = "stdout" if options["output"] == "-" else options["output"]
        # The summary goes to stderr: stdout may be the data itself. The JSON arrays add two lines.
        samples = written if options["format"] == DatasetFormat.RAGAS else written - 2
        self.stderr.write(f"{samples} sample(s) exported to {where}")
