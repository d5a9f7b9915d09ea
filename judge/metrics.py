"""Figures of a judge on labelled pairs: the measures the judge issue's targets are stated in.

- binary balanced accuracy: SUPPORTED against everything else, the mean of the recall of true
  claims and the recall of the others (answering UNSUPPORTED every time scores 0.50);
- three-label balanced accuracy: the mean recall over the labels present in gold;
- precision of SUPPORTED, false-support rate (gold not SUPPORTED called SUPPORTED), recall of
  true claims, share of true claims called CONTRADICTED, contradiction recall and precision.
"""

from collections.abc import Sequence
from typing import Any

from .verdicts import Verdict

LABELS = (Verdict.SUPPORTED, Verdict.UNSUPPORTED, Verdict.CONTRADICTED)


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def figures(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    matrix = {g: dict.fromkeys(LABELS, 0) for g in LABELS}
    for g, p in zip(gold, predicted, strict=True):
        matrix[Verdict(g)][Verdict(p) if p in LABELS else Verdict.UNSUPPORTED] += 1
    total = {g: sum(row.values()) for g, row in matrix.items()}
    recalls = [matrix[g][g] / total[g] for g in LABELS if total[g]]
    true_claims = total[Verdict.SUPPORTED]
    others = total[Verdict.UNSUPPORTED] + total[Verdict.CONTRADICTED]
    false_support = matrix[Verdict.UNSUPPORTED][Verdict.SUPPORTED] + matrix[Verdict.CONTRADICTED][Verdict.SUPPORTED]
    called_supported = sum(matrix[g][Verdict.SUPPORTED] for g in LABELS)
    called_contradicted = sum(matrix[g][Verdict.CONTRADICTED] for g in LABELS)
    recall = _ratio(matrix[Verdict.SUPPORTED][Verdict.SUPPORTED], true_claims)
    fsr = _ratio(false_support, others)
    binary = round((recall + 1 - fsr) / 2, 4) if recall is not None and fsr is not None else None
    return {
        "n": len(gold),
        "confusion": {g.value: {p.value: n for p, n in row.items()} for g, row in matrix.items()},
        "balanced_accuracy": binary,
        "balanced_accuracy_3": round(sum(recalls) / len(recalls), 4) if recalls else None,
        "supported_precision": _ratio(matrix[Verdict.SUPPORTED][Verdict.SUPPORTED], called_supported),
        "false_support_rate": fsr,
        "false_supported": false_support,
        "true_claim_recall": recall,
        "true_called_contradicted": _ratio(matrix[Verdict.SUPPORTED][Verdict.CONTRADICTED], true_claims),
        "contradiction_recall": _ratio(matrix[Verdict.CONTRADICTED][Verdict.CONTRADICTED], total[Verdict.CONTRADICTED]),
        "contradiction_precision": _ratio(matrix[Verdict.CONTRADICTED][Verdict.CONTRADICTED], called_contradicted),
    }
