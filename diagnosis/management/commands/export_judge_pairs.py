"""`manage.py export_judge_pairs`: people's claim verdicts as judge pairs (`diagnosis.services.judge_pairs`)."""

from django.core.management.base import BaseCommand, CommandParser

from diagnosis.management.cli import Progress, export_arguments, project_from_slug, write_lines
from diagnosis.services.judge_pairs import PairExport, judge_pair_records
from diagnosis.services.transfer import json_line


class Command(BaseCommand):
    help = (
        "Write every claim people corrected or confirmed in the inspector (its newest correction) as a labelled "
        "pair, one JSON object a line: claim, the evidence windows the judge read, the person's verdict as label, "
        "lang, project, sessionId, claimId. judge_benchmark measures the judge on the file; listed in "
        "judge/data/train/manifest.json (or a manifest given to judge_train --manifest), judge_train fits on it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        export_arguments(parser)

    def handle(self, *args, **options) -> None:
        project = project_from_slug(options["project"]) if options["project"] else None
        report = PairExport()
        with Progress(self, unit="pair", desc="Exporting", enabled=not options["no_progress"]) as progress:
            lines = (json_line(pair) for pair in judge_pair_records(report=report, project=project))
            write_lines(lines, output=options["output"], stdout=self.stdout, progress=progress)
        where = "stdout" if options["output"] == "-" else options["output"]
        left_out = ", ".join(f"{n} {why}" for why, n in sorted(report.left_out.items())) or "none"
        # The summary goes to stderr: stdout may be the data itself.
        self.stderr.write(f"{report.written} pair(s) exported to {where}; corrections left out: {left_out}")
