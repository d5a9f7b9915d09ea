"""LLM judge: any OpenAI-compatible chat-completions endpoint, with timeout, retries, cache and fallback.

POST `{base_url}/chat/completions` with `model`, bearer `api_key`, JSON response format,
temperature 0. `timeout` seconds per attempt, `retries` retries after the first attempt
(timeouts, transport errors, 408/429/5xx and malformed answers) through tenacity: the wait the
server asks for in `Retry-After`, else an exponential backoff from `backoff` seconds with as much
random jitter (workers that failed together do not retry together), never over `max_wait`; a
server asking for longer than `max_wait` is not asked again. Answers are cached in Django's cache
by a hash of model + prompt for `cache_seconds`. When every attempt fails the `fallback` judge (the
deterministic one, see `factory.py`) decides and the rationale says so (`Judgement.fallback_reason`).
Every setting is a constructor argument: the defaults are the settings'.
"""

import hashlib
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

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


class _Transient(Exception):
    """An answer worth asking again (408, 429, 5xx); `retry_after`: the seconds the server asked for."""

    def __init__(self, message: str, *, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None, *, now: datetime) -> float | None:
    """A `Retry-After` value in seconds from `now`: delay-seconds or an HTTP-date (RFC 9110, 10.2.3);
    None when there is none or it cannot be read."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - now).total_seconds()) if when.tzinfo else None


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
        max_wait: float,
        cache_seconds: int,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url or not model:
            raise ImproperlyConfigured("the LLM judge needs a base URL and a model")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.fallback = fallback
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.cache_seconds = cache_seconds
        self._backoff = wait_exponential_jitter(multiplier=backoff, jitter=backoff, max=max_wait)
        self._retrying = Retrying(
            stop=stop_after_attempt(retries + 1) | self._asked_to_wait_too_long,
            wait=self._wait,
            retry=retry_if_exception_type((httpx.HTTPError, ValueError, _Transient)),
            before_sleep=self._log_retry,
            sleep=sleep,
            reraise=True,
        )
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
        try:
            answer = self._retrying(self._ask, body)
        except (_Permanent, _Transient, httpx.HTTPError, ValueError) as exc:
            return self._fallback(item, reason=_reason(exc))
        cache.set(cache_key, answer, self.cache_seconds)
        return self._judgement(answer)

    def _wait(self, state: RetryCallState) -> float:
        """The wait the server asked for, else the jittered exponential backoff."""
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, _Transient) and error.retry_after is not None:
            return error.retry_after
        return self._backoff(state)

    def _asked_to_wait_too_long(self, state: RetryCallState) -> bool:
        error = state.outcome.exception() if state.outcome else None
        return isinstance(error, _Transient) and error.retry_after is not None and error.retry_after > self.max_wait

    @staticmethod
    def _log_retry(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0
        logger.warning("LLM judge attempt %s failed (%s); retrying in %.1f s", state.attempt_number, error, wait)

    def _fallback(self, item: JudgeInput, *, reason: str) -> Judgement:
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
            problem = f"HTTP {response.status_code} from the LLM endpoint"
            if response.status_code in {408, 429} or response.status_code >= 500:
                retry_after = retry_after_seconds(response.headers.get("Retry-After"), now=datetime.now(UTC))
                if retry_after is not None:
                    problem += f" (Retry-After: {retry_after:g} s)"
                raise _Transient(problem, retry_after=retry_after)
            raise _Permanent(problem)
        try:
            content = response.json()["choices"][0]["message"]["content"]
            answer = json.loads(content)
        except (KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"malformed LLM answer: {exc}") from None
        if not isinstance(answer, dict) or answer.get("verdict") not in JUDGE_VERDICTS:
            raise ValueError(f"LLM answer has no valid verdict: {str(answer)[:120]}")
        rationale = answer.get("rationale")
        return {"verdict": answer["verdict"], "rationale": rationale if isinstance(rationale, str) else ""}


def _reason(error: Exception) -> str:
    """Why the LLM judge gave up, for the rationale: the last attempt's error."""
    if isinstance(error, (_Permanent, _Transient)):
        return str(error)
    return f"{type(error).__name__}: {error}"[:300]
