"""A pair read the way the verifier reads a claim: the cited excerpt's window in its ref."""

import re

from core.text import normalise

from .features import PairAnalysis, pair_analyse
from .window import excerpt_find, ref_text, window


def ref_compact(text: str) -> str:
    """A ref without spaces, hyphens and underscores: where a name the claim gives is looked up."""
    return re.sub(r"[\s\-_]+", "", normalise(text))


def pair_read(claim: str, evidence: str, excerpt: str = "") -> PairAnalysis:
    """`claim` citing `excerpt` (all of it when empty) of a ref whose content is `evidence`."""
    text = ref_text(evidence)
    span = excerpt_find(excerpt, text) if excerpt else None
    cited = window(text, *span) if span else text
    return pair_analyse(claim, (cited,), ref_compact(text))
