"""The analysis of a claim against its evidence windows, as numbers: what the fitted model reads.

`pair_analyse` runs the analysis once (clauses, alignment of each claim unit, the checks of
`checks/`); `feature_vector` turns it into `FEATURES`, in that order:
- units of the claim by kind (word, value, name) and the share of each aligned, and how they
  aligned (verbatim, lemma, glossary, conversion, other); unaligned units by kind;
- conflicts by kind (value, negation, antonym, direction, roles, entity, scope), and whether a
  conflict sits in a located same slot; structure gaps by kind (mood, quantifier, owner, role);
- moods and negation on either side;
- cheap text similarity: word and character n-gram overlap, numbers and names agreeing or not,
  the best-covered evidence sentence, lengths.
The same code computes the features when the model is fitted (`judge.train`) and at run time.
"""

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from core.text import content_tokens, is_causal, normalise, states_causal_link, tokens

from .alignment import align, content_units
from .analysis import Clause, Token, analyse
from .checks.order import roles_check
from .checks.structure import clause_checks, unit_check
from .checks.units import Unit
from .verdicts import UnitStatus, reason

# Reason codes grouped into the kinds the features count.
CONFLICT_KINDS = {
    "value": {"unit.other_value", "unit.slot_value"},
    "negation": {"unit.negation"},
    "antonym": {"unit.antonym_states", "unit.antonym_nearby", "unit.says_phrase"},
    "direction": {"unit.direction_says", "unit.direction_goes"},
    "roles": {"unit.roles_swapped", "unit.roles_from_to", "unit.another_role"},
    "entity": {"unit.another_entity"},
    "scope": {"unit.quantifier", "unit.exception", "unit.other_frequency", "unit.rank"},
}
# Conflicts in a located slot: another value of the same measure, another entity in its place,
# the opposite direction of the same quantity (what CONTRADICTED needs besides its probability).
SLOT_CONFLICTS = frozenset(
    {"unit.other_value", "unit.slot_value", "unit.another_entity", "unit.direction_goes", "unit.roles_from_to"}
)
# Conflicts that locate their slot: those above, and a negation or antonym governing the aligned
# word itself, the opposite direction, swapped roles, an incompatible quantifier, rank or frequency.
LOCATED_CONFLICTS = SLOT_CONFLICTS | {
    "unit.negation", "unit.antonym_states", "unit.direction_says", "unit.roles_swapped", "unit.another_role",
    "unit.quantifier", "unit.exception", "unit.other_frequency", "unit.rank",
}  # fmt: skip
LOCATED = "conflict_located"  # the feature that counts them
STRUCTURE_KINDS = {
    "mood": {"unit.mood", "unit.only_unstated", "unit.hedges", "unit.failed_search", "unit.in_negation"},
    "quantity": {"unit.quantifier", "unit.qualifies", "unit.bounds_only", "unit.total", "unit.share_only",
                 "unit.no_frequency", "unit.alternative"},
    "owner": {"unit.value_of", "unit.stated_for", "unit.stated_for_other", "unit.elsewhere_only",
              "unit.another_event", "unit.said_of", "unit.said_of_not"},
}  # fmt: skip
HOWS = ("verbatim", "lemma", "glossary", "conversion")
KINDS = ("word", "value", "name")
_SENTENCE = re.compile(r"(?:[。！？!?;；\n]|\.(?=\s|$))+")

FEATURES: tuple[str, ...] = (
    "units_log", "aligned_share",
    *(f"{k}_share" for k in KINDS), *(f"{k}_present" for k in KINDS),
    *(f"how_{h}" for h in HOWS), "how_other",
    *(f"unaligned_{k}" for k in KINDS), "unaligned_any",
    *(f"conflict_{k}" for k in CONFLICT_KINDS), "conflict_any", "conflict_slot", "conflict_located",
    *(f"structure_{k}" for k in STRUCTURE_KINDS), "structure_any",
    "claim_mood", "evidence_mood", "claim_negated", "evidence_negated", "negation_mismatch",
    "claim_causal", "causal_unstated",
    "word_overlap", "word_overlap_best_sentence", "bigram_overlap", "trigram_overlap", "evidence_word_share",
    "rare_overlap", "rarest_missing", "missing_rare_words",
    "numbers_claim", "numbers_agree", "numbers_differ", "names_claim", "names_agree",
    "claim_len_log", "evidence_len_log", "zh",
)  # fmt: skip
ZH = FEATURES.index("zh")
# The features of the model for English pairs when the sentence encoder (`encoder.py`) is installed.
ENCODER_FEATURES = (*FEATURES, "encoder_cosine")


@dataclass(slots=True)
class PairAnalysis:
    claim: str
    windows: tuple[str, ...]
    units: list[tuple[str, Unit]] = field(default_factory=list)  # (kind, unit); kind "check" for clause checks
    claim_clauses: tuple[Clause, ...] = ()
    evidence_clauses: list[Clause] = field(default_factory=list)
    homes: list[Clause] = field(default_factory=list)


def _kind(token: Token) -> str:
    if token.identifier:
        return "name"
    return "value" if token.kind == "value" else "word"


def pair_analyse(claim: str, windows: tuple[str, ...], sources: str = "") -> PairAnalysis:
    """The claim's units aligned against the windows and checked (see `checks/`)."""
    found = PairAnalysis(claim, windows)
    claim_analysis = analyse(claim)
    found.claim_clauses = claim_analysis.clauses
    evidence = [clause for window in windows for clause in analyse(window).clauses]
    found.evidence_clauses = evidence
    sources = sources or "".join(re.sub(r"[\s\-_]+", "", normalise(w)) for w in windows)
    causal = states_causal_link(" ".join(windows))
    if evidence:
        for clause in claim_analysis.clauses:
            alignment = align(clause, evidence, causal)
            if alignment.home is not None:
                found.homes.append(alignment.home)
            found.units.extend((_kind(t), unit_check(t, alignment, sources)) for t in content_units(clause))
            found.units.extend(("check", u) for u in clause_checks(alignment))
            found.units.extend(("check", u) for u in roles_check(alignment, evidence))
    if is_causal(claim) and not causal:
        found.units.append(("check", Unit("cause", UnitStatus.UNALIGNED, reason("unit.no_causal_link"))))
    return found


def _how(unit: Unit) -> str:
    how = unit.why.params.get("how", "") if unit.why.code in {"unit.where", "unit.how"} else ""
    return how if how in HOWS else "code class" if how == "code class" else "other"


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    return frozenset(content_tokens(tokens(text)))


@lru_cache(maxsize=4096)
def _grams(text: str, n: int) -> frozenset[str]:
    squeezed = "".join(normalise(text).split())
    return frozenset(squeezed[i : i + n] for i in range(len(squeezed) - n + 1))


IDF_PATH = Path(__file__).resolve().parent / "data" / "idf.json"


@cache
def _document_frequencies() -> tuple[int, dict[str, int]]:
    """How many evidence texts of the fitting data hold each word (judge/data/idf.json, by judge_train)."""
    raw = json.loads(IDF_PATH.read_text(encoding="utf-8"))
    documents, frequencies = raw["documents"], raw["df"]
    if not isinstance(documents, int) or documents < 1 or not isinstance(frequencies, dict):
        raise ValueError(f"{IDF_PATH}: documents must be a positive count and df an object")
    if not all(isinstance(w, str) and isinstance(n, int) and 0 < n <= documents for w, n in frequencies.items()):
        raise ValueError(f"{IDF_PATH}: every df is a word with a count between 1 and documents")
    return documents, frequencies


def rarity(word: str) -> float:
    """Inverse document frequency scaled to (0, 1]: 1 for a word no evidence text held."""
    documents, frequencies = _document_frequencies()
    return math.log((documents + 1) / (frequencies.get(word, 0) + 1)) / math.log(documents + 1)


def _rare(claim_words: frozenset[str], evidence_words: frozenset[str]) -> tuple[float, float, float]:
    """(rarity-weighted share of the claim's words in the evidence, rarity of the rarest missing
    word, count of missing words rarer than one text in a hundred)."""
    weights = {w: rarity(w) for w in claim_words}
    total = sum(weights.values())
    missing = [weights[w] for w in claim_words - evidence_words]
    share = (total - sum(missing)) / total if total else 0.0
    documents = _document_frequencies()[0]
    rare = math.log((documents + 1) / (documents / 100 + 1)) / math.log(documents + 1)
    return share, max(missing, default=0.0), float(sum(m >= rare for m in missing))


def _share(wanted: frozenset[str], have: frozenset[str]) -> float:
    return len(wanted & have) / len(wanted) if wanted else 0.0


def feature_vector(found: PairAnalysis) -> list[float]:
    """`FEATURES` of one analysed pair."""
    evidence = " ".join(found.windows)
    units = [(kind, unit) for kind, unit in found.units if kind != "check"]
    checks = [unit for kind, unit in found.units if kind == "check"]
    every = [unit for _, unit in found.units]
    codes = [u.why.code for u in every if u.status != UnitStatus.ALIGNED]
    aligned = [u for _, u in units if u.status == UnitStatus.ALIGNED]
    by_kind = {k: [u for kind, u in units if kind == k] for k in KINDS}
    hows = [_how(u) for u in aligned]
    conflicts = [u for u in every if u.status == UnitStatus.CONFLICT]
    structure = [u for u in every if u.status == UnitStatus.STRUCTURE]
    n = len(units)
    claim_words, evidence_words = _words(found.claim), _words(evidence)
    sentences = [s for window in found.windows for s in _SENTENCE.split(window) if s.strip()] or [evidence]
    claim_tokens = [t for c in found.claim_clauses for t in c.tokens]
    claim_mood = any(c.mood or c.hedged for c in found.claim_clauses)
    evidence_mood = any(c.mood or c.hedged for c in found.homes)
    claim_negated = any(t.kind == "neg" or t.negated for t in claim_tokens)
    evidence_negated = any(t.kind == "neg" or t.negated for c in found.homes for t in c.tokens)
    values = by_kind["value"] + by_kind["name"]
    numbers = [u for kind, u in units if kind == "value"]
    vector = [
        math.log1p(n),
        len(aligned) / n if n else 0.0,
        *(
            sum(u.status == UnitStatus.ALIGNED for u in by_kind[k]) / len(by_kind[k]) if by_kind[k] else 0.0
            for k in KINDS
        ),
        *(1.0 if by_kind[k] else 0.0 for k in KINDS),
        *(hows.count(h) / n if n else 0.0 for h in HOWS),
        sum(h not in HOWS for h in hows) / n if n else 0.0,
        *(float(sum(u.status == UnitStatus.UNALIGNED for u in by_kind[k])) for k in KINDS),
        float(sum(u.status == UnitStatus.UNALIGNED for u in every)),
        *(float(sum(u.why.code in group for u in conflicts)) for group in CONFLICT_KINDS.values()),
        float(len(conflicts)),
        float(sum(u.why.code in SLOT_CONFLICTS for u in conflicts)),
        float(sum(u.why.code in LOCATED_CONFLICTS for u in conflicts)),
        *(float(sum(u.why.code in group for u in structure)) for group in STRUCTURE_KINDS.values()),
        float(len(structure)),
        float(claim_mood),
        float(evidence_mood),
        float(claim_negated),
        float(evidence_negated),
        float(claim_negated != evidence_negated),
        float(any(u.text == "cause" for u in checks)),
        float("unit.no_causal_link" in codes),
        _share(claim_words, evidence_words),
        max(_share(claim_words, _words(s)) for s in sentences),
        _share(_grams(found.claim, 2), _grams(evidence, 2)),
        _share(_grams(found.claim, 3), _grams(evidence, 3)),
        _share(evidence_words, claim_words) if evidence_words else 0.0,
        *_rare(claim_words, evidence_words),
        float(len(numbers)),
        float(sum(u.status == UnitStatus.ALIGNED for u in numbers)),
        float(sum(u.status == UnitStatus.CONFLICT and u.why.code in SLOT_CONFLICTS for u in values)),
        float(len(by_kind["name"])),
        float(sum(u.status == UnitStatus.ALIGNED for u in by_kind["name"])),
        math.log1p(len(found.claim)),
        math.log1p(len(evidence)),
        1.0 if re.search(r"[\u4e00-\u9fff]", found.claim) else 0.0,
    ]
    return vector


def slot_conflict(found: PairAnalysis) -> Unit | None:
    """The first conflict located in a slot (`LOCATED_CONFLICTS`), if any: CONTRADICTED needs one."""
    return next(
        (u for _, u in found.units if u.status == UnitStatus.CONFLICT and u.why.code in LOCATED_CONFLICTS), None
    )
