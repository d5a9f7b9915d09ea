"""Measure a verifier judge on labelled claim / evidence pairs (JSON Lines)."""

import json
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test import override_settings

from diagnosis.services.evaluation_config import evaluation_config
from diagnosis.services.judge_benchmark import PairFileError, judge_benchmark_run, judge_pairs_load
from diagnosis.services.producers.judges import JUDGE_CHOICES, JUDGE_VERDICTS, judge_build


class Command(BaseCommand):
    help = (
        "Judge every pair of FILE.jsonl (claim, evidence, label, lang per line) through the verifier and print n, "
        "the confusion matrix, balanced accuracy, precision of SUPPORTED, false-support rate, contradiction recall, "
        "recall of true claims and pairs/s, overall and per language."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="pairs, one JSON object a line")
        parser.add_argument("--judge", choices=JUDGE_CHOICES, help="judge to measure (default: SELFEVAL_JUDGE)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--mistakes", action="store_true", help="list every pair judged against its label")

    def handle(self, *args, **options) -> None:
        try:
            pairs = judge_pairs_load(path=options["file"])
        except PairFileError as exc:
            raise CommandError(str(exc)) from exc
        if not pairs:
            raise CommandError(f"{options['file']}: no pairs")
        try:
            with override_settings(**({"SELFEVAL_JUDGE": options["judge"]} if options["judge"] else {})):
                judge = judge_build(config=evaluation_config())
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        try:
            report = judge_benchmark_run(pairs=pairs, judge=judge)
        finally:
            judge.close()
        if options["json"]:
            if not options["mistakes"]:
                report.pop("mistakes")
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        self._table("all", report)
        self.stdout.write(
            f"judge {report['judge']}: {report['pairs_per_second']} pairs/s; sent to an LLM: {report['llm_claims']}"
        )
        for language, figures in report["by_language"].items():
            self._table(language, figures)
        if report["by_phenomenon"]:
            self.stdout.write("\nper phenomenon:      n  false-support  balanced-acc  true-recall")
            for name, f in report["by_phenomenon"].items():
                self.stdout.write(
                    f"  {name:<16} {f['n']:>4}  {_pct(f['false_support_rate']):>13}  {_num(f['balanced_accuracy']):>12}"
                    f"  {_pct(f['true_claim_recall']):>11}"
                )
        if options["mistakes"]:
            self.stdout.write("\nmistakes:")
            for m in report["mistakes"]:
                self.stdout.write(
                    f"  line {m['line']}: {m['label']} -> {m['verdict']}: {m['claim']}\n      {m['rationale']}"
                )

    def _table(self, title: str, f: dict) -> None:
        self.stdout.write(f"\n[{title}] n={f['n']}")
        self.stdout.write("  gold \\ judged    " + "".join(f"{v:>14}" for v in JUDGE_VERDICTS))
        for gold in JUDGE_VERDICTS:
            self.stdout.write(f"  {gold:<16}" + "".join(f"{f['confusion'][gold][v]:>14}" for v in JUDGE_VERDICTS))
        self.stdout.write(
            f"  balanced accuracy {_num(f['balanced_accuracy'])}, precision of SUPPORTED {_num(f['supported_precision'])}, "
            f"false-support rate {_pct(f['false_support_rate'])}, contradiction recall {_pct(f['contradiction_recall'])}, "
            f"recall of true claims {_pct(f['true_claim_recall'])}"
        )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
