"""Evaluation regression harness: judge the labelled fixtures and compare with a baseline."""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagnosis.services.evaluation_harness import (
    FixtureError,
    eval_baseline_build,
    eval_case_run,
    eval_fixtures_load,
    eval_junit_report,
    eval_regressions,
    eval_summary,
)


class Command(BaseCommand):
    help = (
        "Judge every labelled session of tests/fixtures/eval with the default judge, print per-case "
        "results and accuracy per claim label and per verdict. Exit 1 when a case fails, or with "
        "--baseline only when a case that passed there fails now (a regression); --junit also writes "
        "the results as JUnit XML for CI."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--fixtures", type=Path, default=Path(settings.BASE_DIR) / "tests" / "fixtures" / "eval", help="fixture dir"
        )
        parser.add_argument("--baseline", type=Path, help="baseline JSON to compare with")
        parser.add_argument("--write-baseline", type=Path, help="write the results as a new baseline JSON")
        parser.add_argument("--junit", type=Path, metavar="FILE", help="write the results as JUnit XML")

    def handle(self, *args, **options) -> None:
        directory: Path = options["fixtures"]
        if not directory.is_dir():
            raise CommandError(f"--fixtures: {directory} is not a directory")
        baseline = None
        if options["baseline"]:
            try:
                baseline = json.loads(options["baseline"].read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise CommandError(f"--baseline: cannot read {options['baseline']}: {exc}") from exc
        try:
            fixtures = eval_fixtures_load(directory=directory)
        except FixtureError as exc:
            raise CommandError(str(exc)) from exc
        if not fixtures:
            raise CommandError(f"no fixtures in {directory}")

        outcomes = [eval_case_run(fixture=fixture) for fixture in fixtures]
        for outcome in outcomes:
            mark = "ok  " if outcome.passed else "FAIL"
            self.stdout.write(f"{mark} [{outcome.language}] {outcome.name}")
            for mismatch in outcome.mismatches:
                self.stdout.write(f"       {mismatch}")
        summary = eval_summary(outcomes=outcomes)
        self._print_summary(summary)

        if options["write_baseline"]:
            options["write_baseline"].write_text(
                json.dumps(eval_baseline_build(outcomes=outcomes), ensure_ascii=False, indent=2) + "\n",
                encoding="utf-8",
            )
            self.stdout.write(f"baseline written to {options['write_baseline']}")
        if options["junit"]:
            try:
                options["junit"].write_bytes(eval_junit_report(outcomes=outcomes))
            except OSError as exc:
                raise CommandError(f"--junit: cannot write {options['junit']}: {exc}") from exc
            self.stdout.write(f"JUnit report written to {options['junit']}")
        if baseline is None:
            failed = [outcome.name for outcome in outcomes if not outcome.passed]
            if failed:
                raise CommandError(f"{len(failed)} case(s) failed: {', '.join(failed)}")
        else:
            try:
                regressions = eval_regressions(outcomes=outcomes, baseline=baseline)
            except FixtureError as exc:
                raise CommandError(str(exc)) from exc
            if regressions:
                raise CommandError(
                    f"{len(regressions)} case(s) regressed against the baseline: {', '.join(regressions)}"
                )
            self.stdout.write("no regression against the baseline")

    def _print_summary(self, summary: dict) -> None:
        cases = summary["cases"]
        self.stdout.write(f"\ncases passed: {cases['passed']}/{cases['total']}")
        for title, key in (
            ("claim label", "claims"),
            ("verifier verdict", "verdicts"),
            ("gatekeeper status", "gatekeeper"),
            ("AIOps verdict", "aiops_verdicts"),
        ):
            self.stdout.write(f"accuracy per {title}:")
            for label, row in summary[key].items():
                self.stdout.write(f"  {label:<22} {row['correct']:>3}/{row['total']:<3} {row['accuracy']:.1%}")
