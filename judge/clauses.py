"""A text as the judge reads it: clauses of typed tokens (built by `analysis.analyse`)."""

import re
from dataclasses import dataclass

from .facts import Fact


@dataclass(slots=True)
class Token:
    text: str  # surface, normalised
    lemma: str  # English lemma, Chinese word, a value's surface
    kind: str  # "word" | "value" | "neg" | "light"
    pos: str = ""  # jieba tag for Chinese words, "" otherwise
    fact: Fact | None = None
    negated: str = ""  # "" | "neg" | "zero" | "search": what governs this token
    head: bool = False  # the first token a negation governs (or any zeroed token)
    scoped: bool = False  # after a negator in its clause (not governed: the judge abstains on it)

    @property
    def content(self) -> bool:
        return self.kind in {"word", "value"}

    @property
    def identifier(self) -> bool:
        return self.fact is not None and self.fact.kind == "identifier"


@dataclass(slots=True)
class Clause:
    index: int
    sentence: tuple[int, int]  # (text, sentence number): clauses of one sentence share it
    text: str
    tokens: list[Token]
    entities: frozenset[Fact] = frozenset()  # identifiers named, own or inherited
    hedged: bool = False
    quantifier: str = ""  # "all" | "most" | "some" | "few" | "none" | ""
    pairs: tuple[tuple[Token, Token], ...] = ()  # from -> to
    mood: str = ""  # context.moods: "" stated as fact, or a condition, plan or open question
    period: float | None = None  # context.period: seconds between occurrences ("every 2 years")
    siblings: tuple["Clause", ...] = ()  # the clauses of its sentence, itself included
    flat: tuple[Token, ...] = ()  # the tokens of its sentence, in order (shared by the siblings)

    @property
    def compact(self) -> str:
        return re.sub(r"[\s\-_]+", "", self.text)


@dataclass(frozen=True, slots=True)
class Analysis:
    text: str
    clauses: tuple[Clause, ...]
