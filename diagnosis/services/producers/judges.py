"""Judges: does the verified evidence entail one claim? One small protocol, two implementations.

`SELFEVAL_JUDGE` picks the judge: "deterministic" (default, offline) or "llm".

Deterministic judge, in order:
1. a fact of the claim has another value in the evidence (changed number, code, name) or the
   evidence negates a word the claim affirms, or gives it a zero quantity ("evicted_keys stayed
   at 0", "0 errors", "重启次数为 0") while the claim itself negates nothing -> CONTRADICTED;
2. a causal claim (caused, because, due to, led to, 导致, 因为, 由于, 造成, ...) whose evidence
   states no causal link at all (caused by, due to, 因, 由于, therefore, ...) -> UNSUPPORTED:
   both facts side by side are correlation, not cause;
3. every hard fact (numbers, codes, names, times, IPs, quoted text) is stated and at least
   `support_overlap` (default 0.6) of the claim's content words (jieba tokens, stopwords and
   negations left out) occur in the evidence -> SUPPORTED;
4. otherwise UNSUPPORTED.

LLM judge: POST `{SELFEVAL_LLM_BASE_URL}/chat/completions` (any OpenAI-compatible endpoint) with
`SELFEVAL_LLM_MODEL`, bearer `SELFEVAL_LLM_API_KEY`, JSON response format, temperature 0.
`SELFEVAL_LLM_TIMEOUT` seconds per attempt, `SELFEVAL_LLM_RETRIES` retries after the first
attempt (timeouts, transport errors, 408/429/5xx and malformed answers), linear backoff.
Answers are cached in Django's cache by a hash of model + prompt for `SELFEVAL_LLM_CACHE_SECONDS`.
When every attempt fails the deterministic judge decides and the rationale says so
(`Judgement.fallback_reason`).
"""

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from .facts import HARD_KINDS, MISMATCH, STATED, EvidenceText
from .text import (
    GLOSSARY,
    compact,
    content_tokens,
    is_causal,
    is_negation,
    negated_terms,
    normalise,
    stem,
    tokens,
)

logger = logging.getLogger(__name__)

SUPPORTED = "SUPPORTED"
UNSUPPORTED = "UNSUPPORTED"
CONTRADICTED = "CONTRADICTED"
NO_EVIDENCE = "NO_EVIDENCE"
JUDGE_VERDICTS = (SUPPORTED, UNSUPPORTED, CONTRADICTED)
DEFAULT_SUPPORT_OVERLAP = 0.6
PROMPT_VERSION = "selfeval-judge-v1"


@dataclass(frozen=True, slots=True)
class JudgeInput:
    claim_id: str
    text: str
    critical: bool
    evidence: tuple[str, ...]  # verified excerpts in their sentence context
    evidence_text: EvidenceText  # the same, joined and prepared
    facts: tuple[dict[str, Any], ...]  # fact checks (kind, value, status, ...)
    language: str = "en"


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: str  # SUPPORTED | UNSUPPORTED | CONTRADICTED
    rationale: str
    judge: str
    fallback_reason: str = ""
    cached: bool = False


class Judge(Protocol):
    name: str

    def judge(self, item: JudgeInput) -> Judgement: ...


class DeterministicJudge:
    """Token overlap (jieba) + facts agreement + negation agreement; offline and repeatable."""

    name = "deterministic"

    def __init__(self, *, support_overlap: float | None = None) -> None:
        thresholds = getattr(settings, "SELFEVAL_VERIFIER_THRESHOLDS", None) or {}
        self.support_overlap = (
            support_overlap
            if support_overlap is not None
            else float(thresholds.get("support_overlap", DEFAULT_SUPPORT_OVERLAP))
        )

    def judge(self, item: JudgeInput) -> Judgement:
        evidence = item.evidence_text
        mismatched = [f for f in item.facts if f["status"] == MISMATCH]
        if mismatched:
            shown = "; ".join(
                f"{f['text']} vs evidence {', '.join(map(str, f['evidence_values']))}" for f in mismatched
            )
            return Judgement(CONTRADICTED, f"evidence states a different value: {shown}", self.name)
        claim_tokens = tokens(item.text)
        claim_negated = negated_terms(item.text)
        affirmed = {stem(t) for t in set(content_tokens(claim_tokens)) - claim_negated}
        flipped = sorted(affirmed & {stem(t) for t in evidence.negated})
        if flipped:
            return Judgement(CONTRADICTED, f"evidence negates what the claim affirms: {', '.join(flipped)}", self.name)
        # A zero quantity ("evicted_keys stayed at 0") denies the activity a positive claim affirms;
        # a claim that itself negates ("evicted no keys") is what the zero supports.
        if not any(is_negation(t) for t in claim_tokens):
            zeroed = sorted(affirmed & {stem(t) for t in evidence.zeroed})
            if zeroed:
                return Judgement(
                    CONTRADICTED,
                    f"evidence gives a zero quantity for what the claim affirms: {', '.join(zeroed)}",
                    self.name,
                )
        missing = [f for f in item.facts if f["kind"] in HARD_KINDS and f["status"] != STATED]
        words = list(dict.fromkeys(content_tokens(claim_tokens)))
        evidence_stems = {stem(t) for t in evidence.tokens}
        # Words that are part of a fact the evidence states (30 and 秒 of "30 秒" == 30000ms) count.
        stated = compact(" ".join(f["text"] for f in item.facts if f["status"] == STATED))
        covered = [
            w
            for w in words
            if w in evidence.tokens
            or stem(w) in evidence_stems
            or _in_text(w, evidence)
            or compact(w) in stated
            or any(
                stem(g) in evidence_stems or _in_text(g, evidence) for g in GLOSSARY.get(w, GLOSSARY.get(stem(w), ()))
            )
        ]
        overlap = len(covered) / len(words) if words else 0.0
        detail = f"word overlap {overlap:.2f} ({len(covered)}/{len(words)})"
        if missing:
            shown = ", ".join(f["text"] for f in missing)
            return Judgement(UNSUPPORTED, f"evidence does not state: {shown}; {detail}", self.name)
        # Correlation is not causation: "X caused Y" needs evidence that states a causal link,
        # not only X and Y side by side.
        if is_causal(item.text) and not evidence.causal:
            return Judgement(
                UNSUPPORTED,
                f"the claim asserts a cause the evidence does not state (no causal link); {detail}",
                self.name,
            )
        # When the claim's hard facts (numbers, codes, names) are all in the verified excerpt, the
        # rest is wording: half the overlap is enough.
        has_hard_facts = any(f["kind"] in HARD_KINDS for f in item.facts)
        if overlap >= self.support_overlap / (2 if has_hard_facts else 1):
            return Judgement(SUPPORTED, f"verified evidence states the claim's facts; {detail}", self.name)
        uncovered = ", ".join(w for w in words if w not in covered)
        return Judgement(UNSUPPORTED, f"{detail} too low; not in evidence: {uncovered}", self.name)


def _in_text(word: str, evidence: EvidenceText) -> bool:
    # jieba may cut the same Chinese phrase differently in two contexts; a CJK word (or a
    # hyphenated name) counts when it occurs verbatim in the evidence text.
    if word.isascii() and "-" not in word:
        return False
    return normalise(word) in evidence.text or compact(word) in evidence.compact


_SYSTEM_PROMPT = (
    "You check whether evidence entails a claim made by a diagnosis agent. Use only the evidence given. "
    'Answer with a JSON object {"verdict": "SUPPORTED" | "UNSUPPORTED" | "CONTRADICTED", "rationale": "<one sentence>"}. '
    "SUPPORTED: the evidence states the claim, with the same numbers, codes and names. CONTRADICTED: the evidence "
    "states something incompatible (another value, the opposite). UNSUPPORTED: anything else. The absence of "
    "retrieved evidence never proves that something does not exist."
)


class LLMJudge:
    """An OpenAI-compatible chat-completions judge with timeout, retries, cache and fallback."""

    name = "llm"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        backoff: float | None = None,
        cache_seconds: int | None = None,
        fallback: Judge | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = (base_url or getattr(settings, "SELFEVAL_LLM_BASE_URL", "")).rstrip("/")
        self.model = model or getattr(settings, "SELFEVAL_LLM_MODEL", "")
        if not self.base_url or not self.model:
            raise ImproperlyConfigured("SELFEVAL_JUDGE=llm needs SELFEVAL_LLM_BASE_URL and SELFEVAL_LLM_MODEL")
        key = api_key if api_key is not None else getattr(settings, "SELFEVAL_LLM_API_KEY", "")
        self.timeout = timeout if timeout is not None else float(getattr(settings, "SELFEVAL_LLM_TIMEOUT", 20.0))
        self.retries = retries if retries is not None else int(getattr(settings, "SELFEVAL_LLM_RETRIES", 2))
        self.backoff = backoff if backoff is not None else float(getattr(settings, "SELFEVAL_LLM_RETRY_BACKOFF", 0.5))
        self.cache_seconds = (
            cache_seconds
            if cache_seconds is not None
            else int(getattr(settings, "SELFEVAL_LLM_CACHE_SECONDS", 7 * 86400))
        )
        self.fallback = fallback or DeterministicJudge()
        self.label = f"llm:{self.model}"[:64]
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(timeout=self.timeout, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def _messages(self, item: JudgeInput) -> list[dict[str, str]]:
        evidence = "\n".join(f"[{i + 1}] {text}" for i, text in enumerate(item.evidence)) or "(none)"
        facts = "; ".join(f"{f['kind']} {f['text']}: {f['status']}" for f in item.facts) or "(none)"
        user = f"Claim: {item.text}\nEvidence:\n{evidence}\nFacts checked by code: {facts}"
        return [{"role": "system", "content": _SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def judge(self, item: JudgeInput) -> Judgement:
        messages = self._messages(item)
        digest = hashlib.sha256(
            json.dumps([PROMPT_VERSION, self.model, messages], ensure_ascii=False).encode()
        ).hexdigest()
        cache_key = f"selfeval:llm-judge:{digest}"
        hit = cache.get(cache_key)
        if hit is not None:
            return Judgement(hit["verdict"], hit["rationale"], self.label, cached=True)
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        reason = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * attempt)
            try:
                answer = self._ask(body)
            except _Permanent as exc:
                reason = str(exc)
                break
            except (httpx.HTTPError, ValueError) as exc:
                reason = f"{type(exc).__name__}: {exc}"[:300]
                logger.warning("LLM judge attempt %s failed: %s", attempt + 1, reason)
                continue
            cache.set(cache_key, answer, self.cache_seconds)
            return Judgement(answer["verdict"], answer["rationale"], self.label)
        fallback = self.fallback.judge(item)
        return Judgement(
            fallback.verdict,
            f"LLM judge unavailable ({reason}); {fallback.judge} fallback: {fallback.rationale}",
            f"{fallback.judge}(llm-fallback)"[:64],
            fallback_reason=reason or "unknown",
        )

    def _ask(self, body: dict[str, Any]) -> dict[str, str]:
        response = self._client.post(f"{self.base_url}/chat/completions", json=body)
        if response.status_code >= 400:
            if response.status_code in {408, 429} or response.status_code >= 500:
                response.raise_for_status()
            raise _Permanent(f"HTTP {response.status_code} from the LLM endpoint")
        try:
            content = response.json()["choices"][0]["message"]["content"]
            answer = json.loads(content)
        except (KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"malformed LLM answer: {exc}") from None
        if not isinstance(answer, dict) or answer.get("verdict") not in JUDGE_VERDICTS:
            raise ValueError(f"LLM answer has no valid verdict: {str(answer)[:120]}")
        rationale = answer.get("rationale")
        return {"verdict": answer["verdict"], "rationale": rationale if isinstance(rationale, str) else ""}


class _Permanent(Exception):
    """An error retrying will not fix (authentication, bad request)."""


def judge_from_settings() -> Judge:
    """The judge `SELFEVAL_JUDGE` names: "deterministic" (default) or "llm"."""
    choice = getattr(settings, "SELFEVAL_JUDGE", "deterministic") or "deterministic"
    if choice == "deterministic":
        return DeterministicJudge()
    if choice == "llm":
        return LLMJudge()
    raise ImproperlyConfigured(f"SELFEVAL_JUDGE must be 'deterministic' or 'llm', got {choice!r}")
