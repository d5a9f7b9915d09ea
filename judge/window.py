"""What the judge reads of a cited ref: the excerpt with its neighbourhood.

A ref is normalised once (`ref_text`: `core.text.normalise` per line, the line breaks kept, so a
log keeps its lines). The window of an excerpt is its own line(s) with the line before and the
line after when the ref is a log or a table (several lines around it), else its sentence with
the sentence before and the sentence after; at most `LIMIT` characters either side of the
excerpt, so the judge's work is bounded by the window, never by the size of the ref.
"""

import re

from core.text import normalise

LIMIT = 240
_SENTENCE_END = re.compile(r"[。！？!?;；]|\.(?=\s|$)")


def ref_text(raw: str) -> str:
    """`raw` normalised line by line; blank lines dropped. Offsets of an excerpt refer to this."""
    return "\n".join(line for line in (normalise(part) for part in raw.splitlines()) if line)


def excerpt_find(excerpt: str, text: str) -> tuple[int, int] | None:
    """Where the normalised `excerpt` occurs in `text` (a `ref_text`), across line breaks too."""
    wanted = normalise(excerpt)
    if not wanted:
        return None
    for haystack in (text, text.replace("\n", " ")):
        found = haystack.find(wanted)
        if found >= 0:
            return found, found + len(wanted)
    return None


def window(text: str, start: int, end: int, *, limit: int = LIMIT) -> str:
    """The excerpt [start, end) of `text` with the line (or sentence) before and after it."""
    floor, ceiling = max(0, start - limit), min(len(text), end + limit)
    boundary = re.compile(r"\n") if "\n" in text[floor:ceiling] else _SENTENCE_END
    before = [m.end() for m in boundary.finditer(text, floor, start)]
    after = [m.end() for m in boundary.finditer(text, end, ceiling)]
    left = before[-2] if len(before) >= 2 else floor
    right = after[1] if len(after) >= 2 else ceiling
    return text[left:right].strip()
