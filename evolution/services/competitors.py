"""Competitor answers from OpenAI-compatible chat-completions providers, fetched in parallel.

Each provider has its own timeout and all of them share an overall deadline. A provider that
fails, times out or answers nonsense is reported with its error and never contributes an answer;
the caller decides what a missing answer means (it is never a pass).
"""

import json
import time
from concurrent.futures import ALL_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

import httpx

OURS = "ours"
PROVIDER_GRACE_SECONDS = 0.25


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    model: str
    api_key: str = ""

    @classmethod
    def from_setting(cls, entry: dict[str, str]) -> "Provider":
        return cls(
            name=entry["name"], base_url=entry["base_url"], model=entry["model"], api_key=entry.get("api_key", "")
        )


@dataclass(frozen=True)
class CompetitorAnswer:
    name: str
    ok: bool
    content: str = ""
    error: str = ""
    duration_ms: float = 0.0


def _ask(provider: Provider, query: str, timeout: float) -> CompetitorAnswer:
    started = time.perf_counter()
    # httpx's timeout bounds each network wait, not the whole exchange: a provider trickling its
    # body a byte at a time would never trip it. The deadline bounds the whole answer.
    deadline = started + timeout

    def failed(error: str) -> CompetitorAnswer:
        return CompetitorAnswer(
            name=provider.name, ok=False, error=error, duration_ms=round((time.perf_counter() - started) * 1000, 1)
        )

    headers = {"Authorization": f"Bearer {provider.api_key}"} if provider.api_key else {}
    body = {"model": provider.model, "messages": [{"role": "user", "content": query}], "temperature": 0}
    try:
        url = f"{provider.base_url}/chat/completions"
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", url, json=body, headers=headers) as response,
        ):
            if response.status_code != 200:
                return failed(f"HTTP {response.status_code}")
            chunks = []
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                if time.perf_counter() > deadline:
                    return failed(f"timeout after {timeout:g} s")
    except httpx.TimeoutException:
        return failed(f"timeout after {timeout:g} s")
    except httpx.HTTPError as exc:
        return failed(f"connection error: {type(exc).__name__}")
    try:
        content = json.loads(b"".join(chunks))["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return failed("invalid response: no choices[0].message.content")
    if not isinstance(content, str) or not content.strip():
        return failed("invalid response: empty content")
    return CompetitorAnswer(
        name=provider.name, ok=True, content=content, duration_ms=round((time.perf_counter() - started) * 1000, 1)
    )


def competitor_answers_fetch(
    *, query: str, providers: list[Provider], provider_timeout: float, overall_timeout: float
) -> list[CompetitorAnswer]:
    """One answer or one failure per provider, in the providers' order, within overall_timeout."""
    if not providers:
        return []
    pool = ThreadPoolExecutor(max_workers=len(providers), thread_name_prefix="evolution-competitor")
    try:
        futures = [pool.submit(_ask, provider, query, provider_timeout) for provider in providers]
        # Every provider starts at once (one worker each), so no answer is worth waiting for past
        # its own timeout; a small grace lets _ask report its own timeout first.
        per_provider = provider_timeout + PROVIDER_GRACE_SECONDS
        wait(futures, timeout=min(per_provider, overall_timeout), return_when=ALL_COMPLETED)
        answers = []
        for provider, future in zip(providers, futures, strict=True):
            if future.done() and future.exception() is None:
                answers.append(future.result())
            elif future.done():
                answers.append(CompetitorAnswer(name=provider.name, ok=False, error=f"error: {future.exception()!r}"))
            elif per_provider < overall_timeout:
                answers.append(
                    CompetitorAnswer(
                        name=provider.name,
                        ok=False,
                        error=f"timeout after {provider_timeout:g} s",
                        duration_ms=round(per_provider * 1000, 1),
                    )
                )
            else:
                answers.append(
                    CompetitorAnswer(
                        name=provider.name,
                        ok=False,
                        error=f"overall timeout after {overall_timeout:g} s",
                        duration_ms=round(overall_timeout * 1000, 1),
                    )
                )
        return answers
    finally:
        # Never wait for a straggler: its own timeout ends it in the background.
        pool.shutdown(wait=False, cancel_futures=True)
