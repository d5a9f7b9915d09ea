"""The token-overlap baseline a judge must beat: a threshold on how much of the claim the evidence
repeats, tuned on the fitting part of the same file for the best binary balanced accuracy.

Two scores: the share of the claim's content words found among the evidence's words (jieba
words for Chinese), and the share of the claim's character bigrams found in the evidence.
"""

from collections.abc import Sequence

from core.text import content_tokens, normalise, tokens

from .metrics import figures
from .verdicts import Verdict


def word_overlap(claim: str, evidence: str) -> float:
    wanted = set(content_tokens(tokens(claim)))
    if not wanted:
        return 0.0
    return len(wanted & set(tokens(evidence))) / len(wanted)


def _bigrams(text: str) -> set[str]:
    squeezed = "".join(normalise(text).split())
    return {squeezed[i : i + 2] for i in range(len(squeezed) - 1)}


def char_overlap(claim: str, evidence: str) -> float:
    wanted = _bigrams(claim)
    return len(wanted & _bigrams(evidence)) / len(wanted) if wanted else 0.0


SCORES = {"word": word_overlap, "char": char_overlap}


def _called(scores: Sequence[float], threshold: float) -> list[str]:
    return [Verdict.SUPPORTED if s >= threshold else Verdict.UNSUPPORTED for s in scores]


def tune(scores: Sequence[float], gold: Sequence[str]) -> float:
    """The threshold of the best binary balanced accuracy on (scores, gold)."""
    candidates = sorted({round(s, 4) for s in scores})
    best, best_at = -1.0, 1.01
    for threshold in candidates:
        ba = figures(gold, _called(scores, threshold))["balanced_accuracy"] or 0.0
        if ba > best:
            best, best_at = ba, threshold
    return best_at


def baseline_figures(fit: Sequence[tuple[str, str, str]], heldout: Sequence[tuple[str, str, str]]) -> dict:
    """Per score: the threshold tuned on `fit` (claim, evidence, label) and the figures on `heldout`."""
    out = {}
    for name, score in SCORES.items():
        threshold = tune([score(c, e) for c, e, _ in fit], [label for _, _, label in fit])
        held = [score(c, e) for c, e, _ in heldout]
        out[name] = {"threshold": threshold, **figures([label for _, _, label in heldout], _called(held, threshold))}
    return out
