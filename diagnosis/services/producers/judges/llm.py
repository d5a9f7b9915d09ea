"""LLM judge: any OpenAI-compatible chat-completions endpoint, with timeout, retries, cache and fallback.

POST `{base_url}/chat/completions` with `model`, bearer `api_key`, JSON response format,
temperature 0. `timeout` seconds per attempt, `retries` retries after the first attempt
(timeouts, transport errors, 408/429/5xx and malformed answers), linear `backoff`. Answers are
cached in Django's cache by a hash of model + prompt for `cache_seconds`. When every attempt
fails the `fallback` judge (the deterministic one, see `factory.py`) decides and the rationale says so
(`Judgement.fallback_reason`). Every setting is a constructor argument: the defaults are the settings'.
"""

import hashlib
import json
import logging
import time
from typing import Any

import httpx
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from diagnosis.constants import ClaimDecider
from diagnosis.messages import message

from .base import JUDGE_VERDICTS, Judge, JudgeInput, Judgement

logger = logging.getLogger(__name__)

PROMPT_VERSION = "selfeval-judge-v2"
_SYSTEM_PROMPT = (
    "You check whether evidence entails a claim made by a diagnosis agent. Use only the evidence given. "
    'Answer with a JSON object {"verdict": "SUPPORTED" | "UNSUPPORTED" | "CONTRADICTED", "rationale": "<one sentence>"}. '
    "SUPPORTED: the evidence states everything the claim asserts: every entity, number with unit, role, direction "
    "of change, quantifier and modality. CONTRADICTED: the evidence states something incompatible in the same "
    "place (another value, the opposite direction, a negation or an antonym). UNSUPPORTED: anything else. "
    "The absence of retrieved evidence never proves that something does not exist."
)


class _Permanent(Exception):
    """An error retrying will not fix (authentication, bad request)."""


class LLMJudge:
    """An OpenAI-compatible judge. Build it once per worker and `close()` it on shutdown."""

    name = "llm"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        fallback: Judge,
        api_key: str,
        timeout: float,
        retries: int,
        backoff: float,
        cache_seconds: int,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url or not model:
            raise ImproperlyConfigured("the LLM judge needs a base URL and a model")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.fallback = fallback
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.cache_seconds = cache_seconds
        self.label = f"llm:{self.model}"[:64]
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=self.timeout, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()
        self.fallback.close()

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
            return self._judgement(hit, cached=True)
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
            return self._judgement(answer)
        fallback = self.fallback.judge(item)
        return Judgement(
            fallback.verdict,
            message("judge.llm_fallback", reason=reason, judge=fallback.judge, rationale=fallback.message),
            f"{fallback.judge}(llm-fallback)"[:64],
            fallback_reason=reason or "unknown",
            p_supported=fallback.p_supported,
            p_contradicted=fallback.p_contradicted,
            band=fallback.band,
            decided_by=fallback.decided_by,
            reasons=fallback.reasons,
        )

    def _judgement(self, answer: dict[str, str], *, cached: bool = False) -> Judgement:
        why = message("judge.llm", rationale=answer["rationale"])
        return Judgement(answer["verdict"], why, self.label, cached=cached, decided_by=ClaimDecider.LLM, reasons=(why,))

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
