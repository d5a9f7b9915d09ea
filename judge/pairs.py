"""Labelled claim / evidence pairs: the JSON Lines files the judge is fitted and measured on.

One object a line: `claim`, `evidence` (strings), `label` (SUPPORTED, UNSUPPORTED or
CONTRADICTED), `lang` ("zh" or "en"); optional `excerpt` (a verbatim part of `evidence`: what the
claim cites, `evidence` being the whole ref), `phenomenon`, `domain`, `source`, `id`. Blank lines
are skipped; anything else that is not such an object is an error naming the line.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from .split import Split, split_of
from .verdicts import Verdict

LANGUAGES = ("zh", "en")


class PairFileError(ValueError):
    """A pair file that cannot be read; the message names the line."""


@dataclass(frozen=True, slots=True)
class Pair:
    line: int
    claim: str
    evidence: str
    label: Verdict
    lang: str
    excerpt: str = ""
    phenomenon: str = ""
    domain: str = ""

    @property
    def split(self) -> Split:
        return split_of(self.claim)


def pairs_load(path: Path, *, split: Split | None = None) -> list[Pair]:
    """Every pair of a JSONL file (of one part of the split, if given); PairFileError names the first bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PairFileError(f"{path}: cannot read: {exc}") from exc
    pairs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PairFileError(f"{where}: not JSON: {exc.msg}") from exc
        if not isinstance(raw, dict):
            raise PairFileError(f"{where}: a pair is a JSON object")
        for key in ("claim", "evidence", "label", "lang"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise PairFileError(f"{where}: {key!r} must be a non-empty string")
        if raw["label"] not in Verdict.__members__:
            raise PairFileError(f"{where}: label must be one of {', '.join(Verdict)}")
        if raw["lang"] not in LANGUAGES:
            raise PairFileError(f"{where}: lang must be zh or en")
        tags = {key: raw.get(key, "") for key in ("excerpt", "phenomenon", "domain")}
        if not all(isinstance(value, str) for value in tags.values()):
            raise PairFileError(f"{where}: excerpt, phenomenon and domain must be strings")
        if tags["excerpt"] and tags["excerpt"] not in raw["evidence"]:
            raise PairFileError(f"{where}: excerpt must be a verbatim part of evidence")
        pair = Pair(number, raw["claim"], raw["evidence"], Verdict(raw["label"]), raw["lang"], **tags)
        if split is None or pair.split == split:
            pairs.append(pair)
    return pairs
