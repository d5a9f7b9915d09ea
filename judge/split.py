"""The deterministic split of labelled pairs into a fitting part and a held-out part.

A pair's part is decided by a hash of its claim text (normalised by `core.text.normalise`), so a
claim and all its pairs (CLIMATE-FEVER gives five evidence sentences per claim, HealthVer many)
sit on one side only, whatever file or order they come in. `HELDOUT_PERCENT` of the claims are
held out: nothing is fitted, calibrated or tuned on them; they are only measured. Inside the
fitting part, `fold` gives each claim one of `FOLDS` folds by the same hash, for the
out-of-fold predictions the calibration is fitted on.
"""

import hashlib
from enum import StrEnum

from core.text import normalise

HELDOUT_PERCENT = 30
FOLDS = 5


class Split(StrEnum):
    FIT = "fit"
    HELDOUT = "heldout"


def _bucket(claim: str) -> int:
    digest = hashlib.sha256(normalise(claim).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def split_of(claim: str) -> Split:
    return Split.HELDOUT if _bucket(claim) % 100 < HELDOUT_PERCENT else Split.FIT


def fold_of(claim: str) -> int:
    """The claim's fold (0 .. FOLDS - 1) inside the fitting part."""
    return (_bucket(claim) // 100) % FOLDS
