"""The decision: the model file evaluated in pure Python, and the bands drawn from its scores."""

from pathlib import Path

import pytest

from judge.decision import claim_decide
from judge.features import FEATURES, feature_vector, pair_analyse, slot_conflict
from judge.model import Model, ModelError, shipped_model
from judge.pairs import pairs_load
from judge.split import Split
from judge.verdicts import Band, UnitStatus

N = len(FEATURES)


def model(*, supported: float, contradicted: float, bias: tuple[float, float, float]) -> Model:
    """A logistic model that ignores the features: its scores are the softmax of `bias`."""
    return Model({
        "version": 1, "kind": "logistic", "features": list(FEATURES), "mean": [0.0] * N, "scale": [1.0] * N,
        "coef": [[0.0] * N for _ in range(3)], "intercept": list(bias),
        "calibration": {"supported": {"x": [], "y": []}, "contradicted": {"x": [], "y": []}},
        "thresholds": {"supported": supported, "undecided": 0.3, "contradicted": contradicted},
    })  # fmt: skip


def test_a_model_fitted_on_other_features_is_refused():
    raw = shipped_model().raw
    with pytest.raises(ModelError, match="other features"):
        Model({**raw, "features": raw["features"][:-1]})


def test_the_shipped_model_gives_probabilities():
    found = pair_analyse("node-3 disk usage is 91%", ("node-3 disk usage 91% (threshold 85%)",))
    p_supported, p_contradicted = shipped_model().proba(feature_vector(found))

    assert 0.0 <= p_supported <= 1.0 and 0.0 <= p_contradicted <= 1.0


@pytest.mark.parametrize(
    ("bias", "band"),
    [((3.0, 0.0, 0.0), Band.SUPPORTED), ((0.5, 0.2, -1.0), Band.UNDECIDED), ((-3.0, 3.0, 0.0), Band.UNSUPPORTED)],
)
def test_the_band_follows_the_supported_thresholds(bias, band):
    decision = claim_decide(
        "disk usage is 91%", ("disk usage 91%",), model=model(supported=0.6, contradicted=0.9, bias=bias)
    )

    assert decision.band == band and len(decision.reasons) <= 3


def test_contradicted_needs_the_probability_and_a_located_slot_conflict():
    likely = model(supported=0.9, contradicted=0.5, bias=(0.0, 0.0, 4.0))

    located = claim_decide("order-service pool size is 80", ("order-service pool size 50",), model=likely)
    loose = claim_decide("the weather was cold in Paris", ("the museum opened in Paris",), model=likely)

    assert located.band == Band.CONTRADICTED and "50" in str(located.reasons[0].params)
    assert loose.band != Band.CONTRADICTED


def test_a_log_prefix_number_is_never_the_claim_s_slot():
    found = pair_analyse("worker-1 restarted 3 times", ("[pid 4242] line 17: worker-1 restarted 3 times",))
    assert slot_conflict(found) is None
    other = pair_analyse("order-service pool size is 80", ("order-service pool size 50",))
    assert slot_conflict(other) is not None and slot_conflict(other).status == UnitStatus.CONFLICT


def test_a_date_or_time_is_no_count_slot():
    found = pair_analyse("disk usage reached 91% at 14:20", ("2026-11-29 14:35 disk usage reached 91%",))
    assert slot_conflict(found) is None


def test_the_shipped_model_leaves_claims_undecided_for_a_second_judge():
    """The cascade's LLM judge sees only the undecided band: an empty band (undecided threshold at
    the supported one, as the isotonic steps once put it) means a configured LLM is never asked."""
    limits = shipped_model().thresholds
    assert limits.undecided < limits.supported
    pairs = [
        p for name in ("heldout2", "heldout4")
        for p in pairs_load(Path(__file__).parents[1] / "fixtures" / "judge" / f"{name}.jsonl", split=Split.HELDOUT)
    ]  # fmt: skip
    bands = [claim_decide(p.claim, (p.excerpt or p.evidence,)).band for p in pairs]

    assert bands.count(Band.UNDECIDED) >= len(bands) // 20
