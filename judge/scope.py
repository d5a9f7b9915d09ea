"""Negation scope on one clause's tokens (called by `analysis`).

A negator governs the next content tokens of its clause (at most three, up to a preposition or
contrast word); the rest of its clause stands in its wide scope (`scoped`: the judge abstains on
what aligns there). A zero value ("errors: 0", "5xx 错误数为 0", "0 errors") negates the metric
words it is attached to. A negation that governs a search word ("no matching lines", "未检索到")
is marked as a failed search.
"""

from typing import TYPE_CHECKING

from . import cues
from . import glossary as g

if TYPE_CHECKING:
    from .clauses import Token

_ZERO_LINKS = frozenset(
    {"be", "stay", "remain", "at", "of", "to", "equal", "equals", "reach", "show", "total", "=", ":", "为", "是", "保持",
     "维持", "仍为", "均为", "等于", "一直", "都"}
)  # fmt: skip


def scope(tokens: list["Token"], fractions: list[tuple[float, float]]) -> None:
    for i, token in enumerate(tokens):
        if token.kind == "neg":
            governed = []
            for following in tokens[i + 1 :]:
                if following.kind == "neg" or (governed and following.lemma in g.SCOPE_END):
                    break
                if following.content:
                    governed.append(following)
                    if len(governed) == 3:
                        break
            before = [t for t in tokens[max(0, i - 3) : i] if t.content]
            search = any(t.lemma in g.SEARCH_WORDS for t in governed + before[-1:])  # "found no letters"
            for n, t in enumerate(governed):
                t.negated = "search" if search else "neg"
                t.head = t.head or n == 0
            for following in tokens[i + 1 :]:
                if following.lemma in cues.WIDE_SCOPE_END or following.kind == "neg":
                    break
                following.scoped = True
        elif token.fact is not None and token.fact.kind in {"number", "quantity"} and token.fact.value == 0:
            zeroed = _zeroed(tokens, i, {b for a, b in fractions if a == 0})
            search = any(t.lemma in g.SEARCH_WORDS for t in zeroed)  # "0 results for the query"
            for t in zeroed:
                t.negated, t.head = "search" if search else "zero", True


def _zeroed(tokens: list["Token"], at: int, totals: set[float]) -> list["Token"]:
    """The metric tokens a zero at `at` is about: "0 errors", "0/6 healthy", "errors: 0" / "错误数为 0"."""
    following = [t for t in tokens[at + 1 : at + 4] if t.kind != "light"]
    if following and following[0].fact is not None and following[0].fact.value in totals:
        at = tokens.index(following[0])  # the zero of "0/6": what follows the total is counted
        following = following[1:]
    nxt = following[0] if following else None
    forward = (
        nxt is not None
        and nxt.lemma not in g.SCOPE_END
        and ((nxt.kind == "word") or (nxt.fact is not None and nxt.fact.kind == "error_code"))
    )
    if forward:
        taken = []
        for t in tokens[at + 1 :]:
            if t.identifier or t.lemma in g.SCOPE_END or len(taken) == 2:
                break
            if t.content:
                taken.append(t)
        return taken
    taken = []
    for t in reversed(tokens[:at]):
        if t.identifier or t.text == "的" or (t.lemma in g.SCOPE_END and t.lemma not in _ZERO_LINKS) or len(taken) == 3:
            break
        if t.content and t.lemma not in _ZERO_LINKS:
            taken.append(t)
        elif t.kind == "word" and t.lemma in _ZERO_LINKS:
            continue
    return taken
