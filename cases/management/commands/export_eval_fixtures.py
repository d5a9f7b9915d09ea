"""`manage.py export_eval_fixtures`: reviewer decisions become regression fixtures for run_eval."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from cases.services.eval_export import eval_fixtures_export
from diagnosis.management.cli import instant, project_from_slug


class Command(BaseCommand):
    help = (
        "Write approved cases and triaged bad cases as evaluation fixtures (tests/fixtures/eval format, "
        '"source": "reviewer"); the mapping from decisions to expectations is in cases/services/eval_export.py.'
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--output",
            type=Path,
            default=Path(settings.BASE_DIR) / "tests" / "fixtures" / "eval",
            help="directory to write into (created if missing); default tests/fixtures/eval",
        )
        parser.add_argument("--project", help="only this project's decisions (slug)")
        parser.add_argument(
            "--since",
            type=instant,
            help="only decisions made at or after this date or ISO datetime (case approved, bad case last triaged)",
        )

    def handle(self, *args, **options) -> None:
        project = project_from_slug(options["project"]) if options["project"] else None
        result = eval_fixtures_export(output=options["output"], project=project, since=options["since"])
        for path in result.written:
            self.stdout.write(f"wrote {path}")
        for reason in result.skipped:
            self.stdout.write(f"skipped {reason}")
        self.stdout.write(
            self.style.SUCCESS(f"{len(result.written)} fixture(s) written, {len(result.skipped)} skipped")
        )
