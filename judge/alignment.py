"""Where a claim token occurs in an evidence clause: verbatim, lemma, glossary, conversion, substring.

A hit keeps the evidence token (for its polarity) and how it matched. Values match on their
normalised value (facts.py: 30s == 30000 ms, 1,284 == 1284, 5xx is stated by 503); a rival is a
value of the same measure with another value, the raw material of a located conflict.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from . import glossary as g
from .analysis import Clause, Token, lemma
from .context import CONDITION
from .facts import Fact

_WORD_CODES = frozenset({"k8s", "errno", "exception"})
APPROX_TOLERANCE = 0.1  # "about 900 ms", "约 30 平方公里"
RIVAL_WEIGHT = 0.5  # a rival value counts half a hit towards the home clause


@dataclass(frozen=True, slots=True)
class Hit:
    clause: Clause
    token: Token | None  # None when the claim word matched the clause text across tokens
    how: str  # verbatim | lemma | glossary | conversion | substring | antonym
    negated: str = ""  # the evidence occurrence's polarity ("" affirmed)
    head: bool = False

    @property
    def shown(self) -> str:
        return self.token.text if self.token is not None else self.how


@lru_cache(maxsize=8192)
def groups(word: str) -> frozenset[int]:
    return g.SYNONYM_GROUPS.get(word, frozenset())


def token_groups(token: Token) -> frozenset[int]:
    return groups(token.lemma) | groups(token.text)


@lru_cache(maxsize=8192)
def _implied(text: str) -> frozenset[int]:
    """Groups an evidence word or name states besides its own: its parts (es-cluster-prod: es) and
    what the glossary says it implies (HikariPool-1: database connection pool)."""
    found: set[int] = set()
    parts = [p for p in text.replace("_", "-").split("-") if len(p) >= 2]
    for part in {text, *parts}:
        found |= groups(part)
        for key, meanings in g.IMPLIES.items():
            if part == key or (len(key) >= 4 and part.startswith(key)):
                for meaning in meanings:
                    found |= groups(meaning)
    return frozenset(found)


def evidence_groups(token: Token) -> frozenset[int]:
    return token_groups(token) | _implied(token.text)


def _contains(word: str, other: str) -> bool:
    """ "pool" in hikaripool-1, "exceed" in quotaexceeded; never "available" in "unavailable", nor
    a plain word's derivations ("rain" in "rainforest", "king" in "kingdom", "band" in "bandwidth")."""
    if len(word) < 4 or len(other) < len(word) + 3 or word not in other:
        return False
    at = other.find(word)
    if other.isalpha() and at == 0:
        return False
    return at == 0 or at >= 4 or not other[:at].isalpha()


@lru_cache(maxsize=8192)
def _cjk(word: str) -> bool:
    return bool(word) and all(ch >= "\u3400" for ch in word)


def _overlapping(clause: Clause, word: str) -> list[Token]:
    return [t for t in clause.tokens if t.content and t.text and (t.text in word or word in t.text)]


def _text_hit(clause: Clause, word: str, how: str) -> Hit | None:
    if len(word) < 2 or word not in clause.compact:
        return None
    parts = _overlapping(clause, word)
    negated = next((t.negated for t in parts if t.negated), "")
    return Hit(clause, parts[0] if parts else None, how, negated, any(t.head for t in parts))


def word_hits(token: Token, clause: Clause) -> list[Hit]:
    """Occurrences of a claim word (same meaning) in one evidence clause."""
    hits: list[Hit] = []
    wanted = token_groups(token)
    for other in clause.tokens:
        if not other.content:
            continue
        how = ""
        if other.lemma == token.lemma:
            how = "verbatim" if other.text == token.text else "lemma"
        elif wanted and wanted & evidence_groups(other):
            how = "glossary"
        elif (
            token.lemma.isascii()
            and not (other.fact is not None and other.fact.kind in {"quantity", "number"})
            and (_contains(token.lemma, other.text) or _contains(token.text, other.text))
        ):
            how = "substring"  # "pool" in HikariPool-1, "kafka" in kafka-broker-2
        if how:
            hits.append(Hit(clause, other, how, other.negated, other.head))
    if hits:
        return hits
    words = token.lemma.split()
    if len(words) > 1 and not any(w in g.LIGHT_EN for w in words):
        # A phrase the evidence words differently ("connection pool"): every word of it, in this clause.
        parts = [word_hits(Token(w, w, "word"), clause) for w in words]
        if all(parts):
            return [Hit(clause, parts[0][0].token, "words", parts[0][0].negated, parts[0][0].head)]
    if _cjk(token.lemma):
        hit = _text_hit(clause, token.lemma, "verbatim")
        if hit is not None:
            return [hit]
    for number in wanted:
        for synonym in g.SYNONYMS[number]:
            if synonym != token.lemma and not synonym.isascii():
                hit = _text_hit(clause, synonym, "glossary")
                if hit is not None:
                    return [hit]
    return []


def antonym_hits(token: Token, clause: Clause) -> list[Hit]:
    opposite = g.ANTONYM_OF.get(token.lemma, frozenset()) | g.ANTONYM_OF.get(token.text, frozenset())
    if not opposite:
        return []
    hits = [Hit(clause, t, "antonym", t.negated, t.head) for t in clause.tokens if t.content and t.lemma in opposite]
    if not hits:
        for word in opposite:
            if not word.isascii() and len(word) >= 2 and word in clause.compact and token.lemma not in word:
                hit = _text_hit(clause, word, "antonym")
                if hit is not None:
                    hits.append(hit)
    return hits


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= 1e-9 + tolerance * max(abs(a), abs(b))


def _rounding(fact: Fact) -> float:
    """Half a unit of the claim's last digit, in the value's base unit: "2.6 s" covers 2.55-2.65 s."""
    digits = re.search(r"\d[\d,]*(?:\.(\d+))?", fact.text)
    if digits is None:
        return 0.0
    raw = float(digits.group().replace(",", ""))
    decimals = len(digits[1] or "")
    scale = abs(float(fact.value) / raw) if raw else 1.0
    return 0.5 * 10**-decimals * scale if decimals else 0.0


def looseness(fact: Fact, cap: float) -> float:
    """Relative tolerance of "about N": half a unit of N's last significant digit, at least 2 %,
    at most `cap` ("about 900 ms" covers 870 ms, "about 812 ms" does not, nor "约 8611 米" 8848 m)."""
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", fact.text)
    if digits is None:
        return cap
    raw = digits.group().replace(",", "")
    number = float(raw)
    if not number:
        return cap
    whole, _, decimals = raw.partition(".")
    if decimals.rstrip("0"):
        last, unit = decimals.rstrip("0")[-1], 10.0 ** -len(decimals.rstrip("0"))
    else:
        last, unit = whole.rstrip("0")[-1], 10.0 ** (len(whole) - len(whole.rstrip("0")))
    unit *= 5 if last == "5" else 1  # "about 2.5 s" rounds to a half step
    return min(cap, max(0.02, 0.5 * unit / number))


def qualifiers(clause: Clause, token: Token, approx: float = APPROX_TOLERANCE) -> tuple[str, float]:
    """(bound, tolerance) of a value in its clause: "more than 100" is a bound (">"), "about
    900 ms" approximate (a tolerance), a threshold inside a condition exact."""
    if token.kind != "value" or clause.mood == CONDITION:
        return "", 0.0
    at = clause.tokens.index(token)
    before = [t.lemma for t in clause.tokens[max(0, at - 2) : at]]
    after = clause.tokens[at + 1].lemma if at + 1 < len(clause.tokens) else ""
    phrase = " ".join(before)
    for bound, words in g.BOUNDS.items():
        if any(w in words for w in before) or any(phrase.endswith(w) for w in words):
            return bound, 0.0
    if any(w in g.APPROXIMATORS for w in before) or after in g.APPROXIMATORS:
        return "", looseness(token.fact, approx) if token.fact is not None else approx
    return "", 0.0


def qualifier_words(clause: Clause) -> set[int]:
    """ids of the words that bound or approximate a value of the clause ("over" in "over 80,000")."""
    words = {w for ws in g.BOUNDS.values() for w in ws} | g.APPROXIMATORS
    found: set[int] = set()
    for n, token in enumerate(clause.tokens):
        if token.kind == "value":
            found |= {id(t) for t in clause.tokens[max(0, n - 2) : n] if t.lemma in words or t.text in words}
    return found


def _numeric(fact: Fact) -> bool:
    return fact.kind in {"quantity", "number"}


# Words before a bare number that make it a label, not a count: log prefixes (PIDs, threads, line
# numbers, ports), versions and ids are never the slot of a claim's number.
_LABELS = frozenset({"pid", "tid", "thread", "line", "port", "version", "build", "id", "pr", "issue", "row", "v",
                     "release", "no", "#", "进程", "线程", "行", "端口", "版本", "编号"})  # fmt: skip


def _context(fact: Fact) -> set[str]:
    """The words just before a bare number (its family "number:a|b|c")."""
    return set(fact.family[7:].split("|")) if fact.family.startswith("number:") else set()


def same_measure(a: Fact, b: Fact) -> bool:
    """Could `a` and `b` be values of the same slot (so that two different values conflict)? The
    same unit dimension, or two bare numbers after the same word ("pool size 50" / "pool size 80");
    never a label's number (a PID, a line, a port, a version), never a time or date."""
    if _numeric(a) and _numeric(b):
        if _context(a) & _LABELS or _context(b) & _LABELS:
            return False
        if a.kind == "quantity" and b.kind == "quantity":
            return a.family == b.family
        if a.kind == b.kind == "number":
            return bool(_context(a) & _context(b))
        count, number = (a, b) if a.kind == "quantity" else (b, a)
        return count.family.startswith("count:") and count.family[6:] in {w.rstrip("s") for w in _context(number)}
    if a.kind != b.kind:
        return False
    if a.kind == "error_code":
        return a.family == b.family
    if a.kind == "identifier":
        return a.family == b.family and a.family not in {"name"}
    return a.kind == "ip" and a.family == b.family


def value_equal(claim: Fact, evidence: Fact, *, tolerance: float, bound: str) -> str:
    """How `evidence` states the claim's value ("verbatim" / "conversion"), or ""."""
    if _numeric(claim) and _numeric(evidence):
        if not same_measure(claim, evidence):
            return ""
        a, b = float(claim.value), float(evidence.value)
        if bound:
            ok = {">": b > a, ">=": b >= a, "<": b < a, "<=": b <= a}[bound] or _close(a, b, 1e-9)
        else:
            # Exact after conversion (1.8 s == 1800 ms), up to the claim's own rounding, or within
            # `tolerance` after "about".
            ok = _close(a, b, tolerance) if tolerance else abs(a - b) <= _rounding(claim) + 1e-9
        if not ok:
            return ""
        return "verbatim" if claim.text.replace(" ", "") == evidence.text.replace(" ", "") else "conversion"
    if claim.kind != evidence.kind:
        return ""
    if claim.kind == "error_code" and claim.family == evidence.family == "http":
        if claim.value == evidence.value or (claim.value.endswith("xx") and evidence.value[0] == claim.value[0]):
            return "verbatim" if claim.value == evidence.value else "code class"
        return ""
    if claim.value == evidence.value:
        return "verbatim"
    if claim.kind == "identifier" and claim.value.replace("_", "-") == evidence.value.replace("_", "-"):
        return "verbatim"
    return ""


def value_hits(token: Token, clause: Clause, *, tolerance: float, bound: str) -> tuple[list[Hit], list[Hit]]:
    """(hits, rivals) of a claim value in one clause; rivals hold another value of the same measure."""
    fact = token.fact
    assert fact is not None
    if fact.kind == "error_code" and fact.family in _WORD_CODES:
        # OOMKilled, Evicted, ECONNREFUSED: words as much as codes ("evicted_keys", "内存溢出").
        hits = word_hits(Token(fact.value, lemma(fact.value), "word"), clause)
        if hits:
            return hits, []
    hits, rivals = [], []
    if fact.kind == "quoted":
        if fact.value in clause.text:
            hits.append(Hit(clause, None, "verbatim"))
        else:
            rivals = [Hit(clause, t, "rival") for t in clause.tokens if t.fact is not None and t.fact.kind == "quoted"]
        return hits, rivals
    for other in clause.tokens:
        if other.fact is None or other.fact.kind == "quoted":
            continue
        how = value_equal(fact, other.fact, tolerance=tolerance, bound=bound)
        if how:
            hits.append(Hit(clause, other, how, other.negated, other.head))
        elif same_measure(fact, other.fact) and not (
            fact.kind == "error_code" and fact.value.endswith("xx") and other.fact.value[0] == fact.value[0]
        ):
            rivals.append(Hit(clause, other, "rival", other.negated, other.head))
    if not hits and fact.kind == "identifier" and fact.value.replace("-", "") in clause.compact:
        hits.append(Hit(clause, None, "verbatim"))
    return hits, rivals


@dataclass(slots=True)
class Alignment:
    """One claim clause against the evidence clauses: every token's hits, per evidence clause.
    The home is the evidence clause that aligns most of the claim clause's units."""

    clause: Clause
    home: Clause | None
    hits: dict[int, list[Hit]]  # id(token) -> hits in every clause, best region first
    rivals: dict[int, list[Hit]]
    causal: bool  # the cited evidence states a causal link somewhere
    aligned: set[int] | None = None  # ids of the evidence tokens aligned to (order.aligned_ids)


def content_units(clause: Clause) -> list[Token]:
    """The claim's units: its content tokens, less the bound and approximation words of its values."""
    qualifying = qualifier_words(clause)
    return [t for t in clause.tokens if t.content and id(t) not in qualifying]


def align(clause: Clause, evidence: list[Clause], causal: bool, approx: float = APPROX_TOLERANCE) -> Alignment:
    """Each unit of `clause` looked for in every evidence clause; the home's own clause first, then
    its sentence, then the rest."""
    hits: dict[int, list[Hit]] = {}
    rivals: dict[int, list[Hit]] = {}
    score = [0.0] * len(evidence)
    for token in content_units(clause):
        found, against = [], []
        bound, tolerance = qualifiers(clause, token, approx)
        for n, other in enumerate(evidence):
            if token.kind == "value":
                h, r = value_hits(token, other, tolerance=tolerance, bound=bound)
                against.extend(r)
            else:
                h = word_hits(token, other)
            if h:
                score[n] += 1
                found.extend(h)
            elif token.kind == "value" and r:
                # Another value of the claim's measure: this clause may be the claim's slot
                # ("57% of commands time out" against "...TimeoutException ...; 75% of commands time out").
                score[n] += RIVAL_WEIGHT
        hits[id(token)], rivals[id(token)] = found, against
    home = evidence[max(range(len(evidence)), key=lambda n: (score[n], -n))] if any(score) else None
    if home is not None:
        for key in hits:
            hits[key].sort(key=lambda h: _region(h.clause, home))
            rivals[key].sort(key=lambda h: _region(h.clause, home))
    return Alignment(clause, home, hits, rivals, causal)


def _region(clause: Clause, home: Clause) -> int:
    if clause is home:
        return 0
    return 1 if clause.sentence == home.sentence else 2
