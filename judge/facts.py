"""Critical facts of a claim and whether verified evidence states them, with the same value.

Kinds extracted (on normalised text, each span masked once taken so a pod hash's digits are
not read again as a number): quoted strings, times and dates, IPs, error codes (HTTP codes and
classes such as 5xx, ORA-xxxxx, E1234, ERR-1001, errno names, exit codes, exceptions, Kubernetes
reasons), identifiers (kebab names such as order-service, pod names with hashes, numbered hosts),
quantities (numbers with units and percentages; durations are compared in ms, sizes in bytes),
bare numbers and negations (the words a negation governs, found on jieba tokens).

Each fact is checked against the verified evidence context:
- STATED: the evidence has the same value (30s == 30000ms; 5xx is stated by any 5.. code);
- MISMATCH: the evidence has a value of the same family (same unit dimension, same code family,
  same kind of identifier, the negated word stated positively) but not this one;
- ABSENT: the evidence says nothing about it.
"""

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.text import (
    STOPWORDS,
    compact,
    content_tokens,
    negated_terms,
    normalise,
    states_causal_link,
    tokens,
    zeroed_terms,
)

STATED = "STATED"
MISMATCH = "MISMATCH"
ABSENT = "ABSENT"
# Kinds whose absence from the evidence means the claim asserts something the evidence lacks.
HARD_KINDS = frozenset({"quantity", "number", "time", "error_code", "identifier", "ip", "quoted"})

_A = r"(?<![a-z0-9_])"
_Z = r"(?![a-z0-9_])"
_QUOTED = re.compile(
    r"\"([^\"]{2,80})\"|“([^”]{2,80})”|「([^」]{2,80})」|『([^』]{2,80})』|(?<![a-z])'([^']{2,80})'(?![a-z])"
)
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:z|[+-]\d{2}:?\d{2})?)?")
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
_CLOCK_ZH = re.compile(r"(?<!\d)(\d{1,2})点(?:(\d{1,2})分)?")
_IP = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\d.])")
_ERROR_CODES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(_A + r"([1-5])xx" + _Z), "http_class"),
    (re.compile(r"(?:exit(?:\s+code|\s+status)?|退出码|exit_code)\s*[:=]?\s*(-?\d{1,3})(?!\d)"), "exit"),
    (re.compile(r"(?:http|status|状态码|返回码|返回|response|code)\s*[:=]?\s*([1-5]\d{2})(?!\d)"), "http"),
    (re.compile(_A + r"([a-z]{1,6})-(\d{3,6})" + _Z), "prefixed"),
    (re.compile(_A + r"e(\d{3,5})" + _Z), "e"),
    (re.compile(_A + r"e(?:connrefused|timedout|connreset|nospc|addrinuse|nomem|acces|pipe|hostunreach)" + _Z), "errno"),
    (re.compile(r"(?:[a-z0-9_]+\.)*([a-z][a-z0-9_]{2,}(?:exception|error))" + _Z), "exception"),
    (re.compile(_A + r"(?:oomkilled|crashloopbackoff|imagepullbackoff|errimagepull|evicted|createcontainererror)" + _Z), "k8s"),
)  # fmt: skip
_IDENTIFIER = re.compile(r"(?<![a-z0-9_.\-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![a-z0-9_\-])")
_HOST = re.compile(r"(?<![a-z0-9_.\-])[a-z][a-z0-9-]*\d[a-z0-9-]*(?:\.[a-z0-9-]+)+(?![a-z0-9_\-])")
_SERVICE_WORDS = frozenset(
    {"service", "svc", "api", "server", "gateway", "db", "database", "worker", "agent", "proxy", "cache", "app",
     "web", "job", "node", "pod", "mq", "queue", "redis", "mysql", "postgres", "kafka", "backend", "frontend"}
)  # fmt: skip
_HASHLIKE = re.compile(r"^(?=.*\d)(?=.*[a-z])[a-z0-9]{5,}$")

_UNITS: dict[str, tuple[str, float]] = {}
for _names, _dimension, _factor in (
    (("ms", "毫秒", "millisecond", "milliseconds"), "duration", 1.0),
    (("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), "duration", 1000.0),
    (("min", "mins", "minute", "minutes", "分钟"), "duration", 60_000.0),
    (("h", "hr", "hrs", "hour", "hours", "小时"), "duration", 3_600_000.0),
    (("d", "day", "days", "天"), "duration", 86_400_000.0),
    (("%", "percent", "百分比"), "percent", 1.0),
    (("b", "byte", "bytes", "字节"), "size", 1.0),
    (("k", "kb", "kib", "ki"), "size", 1024.0),
    (("m", "mb", "mib", "mi"), "size", 1024.0**2),
    (("g", "gb", "gib", "gi"), "size", 1024.0**3),
    (("t", "tb", "tib", "ti"), "size", 1024.0**4),
):
    for _name in _names:
        _UNITS[_name] = (_dimension, _factor)
_CJK_COUNTERS = ("个", "次", "条", "台", "倍", "核", "项", "笔", "人", "万", "毫核", "个连接", "次/秒")
_UNIT_ALTERNATION = "|".join(sorted((re.escape(u) for u in (*_UNITS, *_CJK_COUNTERS)), key=len, reverse=True))
# Words after a number that are not what it counts ("stayed at 0 during the incident").
_NOT_UNITS = "|".join(
    ("during", "since", "over", "within", "until", "across", "per", "through", "between", "while", "and", "the",
     "for", "with", "from", "after", "before", "than", "more", "less", "was", "are", "were", "in", "on", "at", "of",
     "to", "into", "but", "or", "via", "by", "when", "then", "because", "is", "has", "had", "have")
)  # fmt: skip
_QUANTITY = re.compile(
    r"(?<![a-z0-9_.\-])(?:百分之\s*(?P<pct>\d+(?:\.\d+)?)|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    rf"(?:\s*(?P<unit>{_UNIT_ALTERNATION})(?:(?<=[^\x00-\x7f])|(?![a-z]))|\s(?!(?:{_NOT_UNITS})(?![a-z]))(?P<word>[a-z]{{3,}})(?![a-z]))?)"
    r"(?:(?<=[^\x00-\x7f])|(?![a-z0-9_]))"
)


@dataclass(frozen=True, slots=True)
class Fact:
    kind: str
    value: Any  # comparable value: float for quantities and numbers, normalised string otherwise
    family: str  # facts of the same family and another value contradict each other
    text: str  # the surface form, as normalised

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "family": self.family, "text": self.text}


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _number(raw: str) -> float:
    return float(raw.replace(",", ""))


@lru_cache(maxsize=8192)
def extract_facts(text: str) -> tuple[Fact, ...]:
    """The critical facts stated in `text`, in a stable order (by kind, then position)."""
    facts = [fact for _, _, fact in fact_spans(normalise(text))]
    facts.extend(Fact("negation", term, "negation", f"not {term}") for term in sorted(negated_terms(text)))
    return tuple(facts)


@lru_cache(maxsize=8192)
def fact_spans(work: str) -> tuple[tuple[int, int, Fact], ...]:
    """(start, end, fact) of every fact of already normalised text, in extraction order."""
    spans: list[tuple[int, int, Fact]] = []
    for match in _QUOTED.finditer(work):
        quoted = next(g for g in match.groups() if g)
        spans.append((match.start(), match.end(), Fact("quoted", quoted.strip(), "quoted", match.group())))
    original = work  # masking keeps positions, so context words can be read here

    def take(pattern: re.Pattern[str], build) -> None:
        nonlocal work
        for match in list(pattern.finditer(work)):
            fact = build(match)
            if fact is not None:
                spans.append((match.start(), match.end(), fact))
                work = _mask(work, match.start(), match.end())

    take(_DATETIME, lambda m: Fact("time", m.group(), "datetime", m.group()))
    take(_CLOCK, lambda m: Fact("time", f"{int(m[1]):02d}:{m[2]}" + (f":{m[3]}" if m[3] else ""), "clock", m.group()))
    take(_CLOCK_ZH, lambda m: Fact("time", f"{int(m[1]):02d}:{int(m[2] or 0):02d}", "clock", m.group()))
    take(_IP, lambda m: Fact("ip", m.group(), "ip", m.group()))
    for pattern, family in _ERROR_CODES:
        take(pattern, lambda m, family=family: _error_code(m, family))
    take(_HOST, lambda m: Fact("identifier", m.group(), "host", m.group()))
    take(_IDENTIFIER, _identifier)
    take(_QUANTITY, lambda m: _quantity(m, original))
    return tuple(spans)


def _error_code(match: re.Match[str], family: str) -> Fact:
    surface = match.group()
    if family == "http_class":
        return Fact("error_code", f"{match[1]}xx", "http", surface)
    if family == "http":
        return Fact("error_code", match[1], "http", surface)
    if family == "exit":
        return Fact("error_code", match[1], "exit", surface)
    if family == "prefixed":
        return Fact("error_code", f"{match[1]}-{match[2]}", match[1], surface)
    if family == "exception":
        return Fact("error_code", match[1], "exception", surface)
    return Fact("error_code", surface, family, surface)


def _identifier(match: re.Match[str]) -> Fact | None:
    value = match.group()
    segments = re.split(r"[-_]", value)
    if any(_HASHLIKE.match(s) for s in segments[1:]) and len(segments) >= 3:
        return Fact("identifier", value, "pod", value)
    service_word = next((s for s in reversed(segments) if s in _SERVICE_WORDS), None)
    if service_word is not None:
        return Fact("identifier", value, service_word, value)
    if any(ch.isdigit() for ch in value):
        return Fact("identifier", value, "name", value)
    return None  # "read-only", "well-known": ordinary hyphenated words


def service_of(fact: Fact) -> str:
    """The service an identifier fact names: order-service, or a pod's deployment name."""
    if fact.kind != "identifier" or fact.family in {"host", "name"}:
        return ""
    if fact.family == "pod":
        segments = re.split(r"[-_]", fact.value)
        kept = [s for s in segments if not _HASHLIKE.match(s)]
        return "-".join(kept[: max(1, len(kept) - 1)] if len(kept) > 2 else kept)
    return fact.value


def _quantity(match: re.Match[str], original: str) -> Fact | None:
    if match["pct"] is not None:
        return Fact("quantity", _number(match["pct"]), "percent", match.group())
    number = _number(match["num"])
    unit = match["unit"]
    if unit is None and match["word"] and match["word"] not in STOPWORDS:
        word = match["word"]
        unit = word[:-1] if word.endswith("s") and len(word) > 3 else word
    if unit is None:
        # A bare number's family is the word before it ("最大连接数为 50", "pool size 50"), so a
        # different number after the same word is a mismatch and an unrelated one is not.
        before = content_tokens(tokens(original[max(0, match.start() - 40) : match.start()]))[-3:]
        return Fact("number", number, "number:" + "|".join(before) if before else "number", match["num"])
    if unit in _UNITS:
        dimension, factor = _UNITS[unit]
        return Fact("quantity", round(number * factor, 6), dimension, match.group())
    return Fact("quantity", number, f"count:{unit}", match.group())


@dataclass(frozen=True, slots=True)
class EvidenceText:
    """Evidence context prepared once: its text, compact text, facts, tokens and negated words."""

    text: str
    compact: str
    facts: tuple[Fact, ...]
    tokens: frozenset[str]
    negated: frozenset[str]
    zeroed: frozenset[str] = frozenset()  # activity words given a zero quantity ("errors: 0")
    causal: bool = False  # the evidence states a causal link (caused by, 由于, 因, therefore)


@lru_cache(maxsize=4096)
def evidence_text(text: str) -> EvidenceText:
    return EvidenceText(
        text=normalise(text),
        compact=compact(text),
        facts=extract_facts(text),
        tokens=frozenset(content_tokens(tokens(text))),
        negated=frozenset(negated_terms(text)),
        zeroed=frozenset(zeroed_terms(text)),
        causal=states_causal_link(text),
    )


def _contexts_meet(a: str, b: str) -> bool:
    """Two bare numbers are about the same thing when a word just before them is shared."""
    if not (a.startswith("number:") and b.startswith("number:")):
        return False
    return bool(set(a[7:].split("|")) & set(b[7:].split("|")))


def _same_number(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 + 0.005 * max(abs(a), abs(b))


def fact_check(fact: Fact, evidence: EvidenceText) -> tuple[str, list[Any]]:
    """(STATED | MISMATCH | ABSENT, the evidence's values of the same family when they differ)."""
    if fact.kind == "quoted":
        if normalise(fact.value) in evidence.text:
            return STATED, []
        others = [f.value for f in evidence.facts if f.kind == "quoted"]
        return (MISMATCH, others) if others else (ABSENT, [])
    if fact.kind == "negation":
        # "no errors" is stated by "errors: 0" as much as by "no errors".
        if fact.value in evidence.negated or fact.value in evidence.zeroed:
            return STATED, []
        return (MISMATCH, [fact.value]) if fact.value in evidence.tokens else (ABSENT, [])
    if fact.kind == "number":
        numbers = [_number(m) for m in re.findall(r"\d+(?:\.\d+)?", evidence.text)]
        if any(_same_number(fact.value, n) for n in numbers):
            return STATED, []
        rivals = [f.text for f in evidence.facts if f.kind == "number" and _contexts_meet(f.family, fact.family)]
        return (MISMATCH, rivals) if rivals else (ABSENT, [])
    same_family = [f for f in evidence.facts if f.kind == fact.kind and f.family == fact.family]
    if fact.kind == "quantity":
        if any(_same_number(fact.value, f.value) for f in same_family):
            return STATED, []
        if fact.family.startswith("count:") and any(
            f.kind == "number" and _same_number(fact.value, f.value) for f in evidence.facts
        ):
            return STATED, []  # "132 个请求" is stated by "waiting=132"
        return (MISMATCH, [f.text for f in same_family]) if same_family else (ABSENT, [])
    if fact.family == "http":
        return _http_check(fact, same_family)
    if any(f.value == fact.value for f in same_family):
        return STATED, []
    if fact.kind == "identifier" and compact(fact.value) in evidence.compact:
        return STATED, []
    if fact.kind != "identifier" and fact.value in evidence.text:
        return STATED, []
    return (MISMATCH, sorted({f.value for f in same_family})) if same_family else (ABSENT, [])


def _http_check(fact: Fact, same_family: list[Fact]) -> tuple[str, list[Any]]:
    """HTTP codes: a class (5xx) is stated by any code of that class and never contradicted by one."""
    wanted_class = fact.value[0]
    for f in same_family:
        if f.value == fact.value or (fact.value.endswith("xx") and f.value[0] == wanted_class):
            return STATED, []
    different = [f.value for f in same_family if f.value[0] != wanted_class or not f.value.endswith("xx")]
    if fact.value.endswith("xx"):
        different = [v for v in different if v[0] != wanted_class]
    return (MISMATCH, sorted(set(different))) if different else (ABSENT, [])
