"""Fit the judge's model on the committed training data and write it beside the package (`judge.train`)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judge.encoder import sentence_encoder
from judge.model import ENCODER_MODEL_PATH, MODEL_PATH
from judge.train import (
    ENCODER_CACHE,
    FEATURE_CACHE,
    KIND,
    MANIFEST,
    TrainingUnavailable,
    cache_read,
    cache_write,
    document_frequencies,
    idf_write,
    manifest_read,
    model_train,
    training_rows,
)


class Command(BaseCommand):
    help = (
        "Fit the judge's model on the fitting parts of the files of judge/data/train/manifest.json (features cached "
        "in judge/data/features.jsonl.gz), calibrate it and choose its thresholds leave one group out; write "
        "judge/data/model.json, and with the sentence encoder installed (requirements-encoder.txt) the English pairs' "
        "model with its cosine, judge/data/model_encoder.json (cosines cached in judge/data/encoder.jsonl.gz). "
        "Needs scikit-learn (requirements-dev.txt)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--kind", choices=("logistic", "trees"), default=KIND, help="the classifier")
        parser.add_argument("--fresh", action="store_true", help="recompute every feature, ignoring the cache")
        parser.add_argument(
            "--manifest",
            type=Path,
            default=MANIFEST,
            help="the training files (group, kind, path, licence), e.g. the committed ones plus a team's own "
            "export_judge_pairs file; paths relative to the repository",
        )

    def handle(self, *args, **options) -> None:
        fresh = (
            idf_write(document_frequencies(options["manifest"])) or options["fresh"]
        )  # new rarities: every feature again
        cache = {} if fresh else cache_read()
        known = len(cache)
        sources = manifest_read(options["manifest"])
        try:
            rows = training_rows(manifest=options["manifest"], cache=cache)
            self._write(MODEL_PATH, model_train(rows=rows, kind=options["kind"], sources=sources), len(rows))
            if sentence_encoder() is None:
                self.stdout.write(f"the sentence encoder is not installed: {ENCODER_MODEL_PATH} not refitted")
            else:
                cosines = {} if options["fresh"] else cache_read(ENCODER_CACHE, encoded=True)
                encoded = len(cosines)
                rows = training_rows(manifest=options["manifest"], cache=cache, cosines=cosines)
                model = model_train(rows=rows, kind=options["kind"], sources=sources)
                if len(cosines) != encoded or options["fresh"]:
                    cache_write(cosines, ENCODER_CACHE, encoded=True)
                self._write(ENCODER_MODEL_PATH, model, len(rows))
        except TrainingUnavailable as exc:
            raise CommandError(str(exc)) from exc
        if len(cache) != known or fresh:
            cache_write(cache, FEATURE_CACHE)
        self.stdout.write("update judge/data/MODEL_CARD.md with judge_benchmark --split heldout")

    def _write(self, path: Path, model: dict, pairs: int) -> None:
        path.write_text(json.dumps(model, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n")
        self.stdout.write(f"{pairs} pairs, {model['kind']} model written to {path}; thresholds {model['thresholds']}")
