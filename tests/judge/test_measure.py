"""The split, the figures and the token-overlap baseline the judge is measured with."""

from judge.baseline import baseline_figures, char_overlap, tune, word_overlap
from judge.metrics import figures
from judge.split import HELDOUT_PERCENT, Split, fold_of, split_of

S, U, C = "SUPPORTED", "UNSUPPORTED", "CONTRADICTED"


def test_the_split_is_by_claim_whatever_its_spacing_or_case():
    assert split_of("Disk usage is 91%") == split_of("  disk   USAGE is 91% ")
    claims = [f"claim number {n}" for n in range(4000)]
    share = sum(split_of(c) == Split.HELDOUT for c in claims) / len(claims)
    assert abs(share - HELDOUT_PERCENT / 100) < 0.03
    assert {fold_of(c) for c in claims} == {0, 1, 2, 3, 4}


def test_always_unsupported_scores_one_half():
    gold = [S, S, U, C]
    report = figures(gold, [U] * 4)

    assert (report["balanced_accuracy"], report["true_claim_recall"], report["false_support_rate"]) == (0.5, 0.0, 0.0)


def test_figures_of_a_mixed_judge():
    report = figures([S, S, S, S, U, U, C, C], [S, S, S, C, S, U, C, U])

    assert report["true_claim_recall"] == 0.75 and report["false_support_rate"] == 0.25
    assert report["balanced_accuracy"] == 0.75
    assert report["true_called_contradicted"] == 0.25 and report["contradiction_recall"] == 0.5
    assert report["contradiction_precision"] == 0.5 and report["supported_precision"] == 0.75
    assert report["balanced_accuracy_3"] == round((0.75 + 0.5 + 0.5) / 3, 4)


def test_overlap_scores():
    assert word_overlap("disk usage 91%", "node-3 disk usage 91%") == 1.0
    assert char_overlap("磁盘使用率", "磁盘使用率为 91%") == 1.0
    assert word_overlap("memory leak", "disk full") == 0.0


def test_the_baseline_threshold_is_tuned_on_the_fitting_part_only():
    fit = [("a b", "a b", S), ("a b", "a", U), ("c d", "c d", S), ("c d", "x", U)]

    assert tune([1.0, 0.5, 1.0, 0.0], [S, U, S, U]) == 1.0
    held = baseline_figures(fit, [("e f", "e f", S), ("e f", "e", U)])
    assert held["word"]["balanced_accuracy"] == 1.0
