"""A pair read the way the verifier reads a claim: the cited excerpt's window in its ref."""

import re

from core.text import normalise

from .features import PairAnalysis, pair_analyse
from .window import excerpt_find, ref_text, window


def ref_compact(text: str) -> str:
    """A ref without spaces, hyphens and underscores: where a name the claim gives is looked up."""
    return re.sub(r"[\s\-_]+", "", normalise(text))


def pair_windows(evidence: str, excerpt: str = "") -> tuple[tuple[str, ...], str]:
    """The windows the judge reads of `excerpt` (all of the ref when empty) in a ref whose content is
    `evidence`, and the ref compacted (`ref_compact`)."""
    text = ref_text(evidence)
    span = excerpt_find(excerpt, text) if excerpt else None
    return (window(text, *span) if span else text,), ref_compact(text)


def pair_read(claim: str, evidence: str, excerpt: str = "") -> PairAnalysis:
    """`claim` citing `excerpt` (all of it when empty) of a ref whose content is `evidence`."""
    return pair_analyse(claim, *pair_windows(evidence, excerpt))
