"""The fitted model at run time: a small JSON file read once, evaluated in pure Python.

`judge/data/model.json` (written by `manage.py judge_train`, described in MODEL_CARD.md beside
it) and, for English pairs when the optional sentence encoder is installed, `model_encoder.json`
(the same features and the encoder's cosine) hold the feature names they were fitted on, the classifier (a multinomial logistic regression:
the scaler, coefficients and intercepts; or gradient-boosted trees: per round and class a tree
of nodes), the calibration of P(supported) and P(contradicted) (isotonic: breakpoints and values,
linearly interpolated) and the thresholds of the bands. Nothing is downloaded, no numpy needed.
"""

import bisect
import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .features import ENCODER_FEATURES, FEATURES

MODEL_PATH = Path(__file__).resolve().parent / "data" / "model.json"
ENCODER_MODEL_PATH = MODEL_PATH.with_name("model_encoder.json")
CLASSES = ("SUPPORTED", "UNSUPPORTED", "CONTRADICTED")


class ModelError(ValueError):
    """A model file that does not fit this code (other features, unknown kind, bad shape)."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    supported: float  # P(supported) at or above: SUPPORTED
    undecided: float  # P(supported) at or above (and below `supported`): undecided
    contradicted: float  # P(contradicted) at or above, with a located slot conflict: CONTRADICTED


def _interpolate(x: float, xs: list[float], ys: list[float]) -> float:
    if not xs:
        return x
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _softmax(scores: list[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _tree_value(nodes: list[list[float]], x: list[float]) -> float:
    """nodes: [feature, threshold, left, right, value, missing_left]; a leaf has feature -1."""
    at = 0
    while True:
        feature, threshold, left, right, value, _ = nodes[at]
        if feature < 0:
            return value
        at = int(left) if x[int(feature)] <= threshold else int(right)


class Model:
    def __init__(self, raw: dict[str, Any]) -> None:
        if raw.get("features") not in (list(FEATURES), list(ENCODER_FEATURES)):
            raise ModelError("the model was fitted on other features than judge.features computes: run judge_train")
        self.raw = raw
        self.uses_encoder = raw["features"] == list(ENCODER_FEATURES)
        self.kind = raw["kind"]
        if self.kind not in {"logistic", "trees"}:
            raise ModelError(f"unknown model kind {self.kind!r}")
        self.version = raw["version"]
        self.thresholds = Thresholds(**raw["thresholds"])
        self.calibration = raw["calibration"]

    def raw_proba(self, x: list[float]) -> list[float]:
        """Uncalibrated P(SUPPORTED), P(UNSUPPORTED), P(CONTRADICTED)."""
        if self.kind == "logistic":
            scaled = [(v - m) / s for v, m, s in zip(x, self.raw["mean"], self.raw["scale"], strict=True)]
            scores = [
                b + sum(w * v for w, v in zip(row, scaled, strict=True))
                for row, b in zip(self.raw["coef"], self.raw["intercept"], strict=True)
            ]
        else:
            scores = list(self.raw["baseline"])
            for trees in self.raw["trees"]:  # one round: a tree per class
                for k, nodes in enumerate(trees):
                    scores[k] += _tree_value(nodes, x)
        return _softmax(scores)

    def proba(self, x: list[float]) -> tuple[float, float]:
        """Calibrated (P(supported), P(contradicted))."""
        p = self.raw_proba(x)
        s, c = self.calibration["supported"], self.calibration["contradicted"]
        return _interpolate(p[0], s["x"], s["y"]), _interpolate(p[2], c["x"], c["y"])


def model_read(path: Path) -> Model:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: cannot read the model: {exc}") from exc
    return Model(raw)


@cache
def shipped_model() -> Model:
    """The model the package ships (read once per process)."""
    return model_read(MODEL_PATH)


@cache
def encoder_model() -> Model:
    """The model of English pairs with the encoder's cosine (read once per process)."""
    return model_read(ENCODER_MODEL_PATH)
