"""The one place that turns settings into a judge, and the per-process judge built from it.

`SELFEVAL_JUDGE`: "deterministic" (default, offline), "llm" (the LLM judge for every claim, the
deterministic judge as its fallback) or "cascade" (deterministic first, the LLM judge only for
claims it leaves UNSUPPORTED for unaligned units). The LLM settings (`SELFEVAL_LLM_*`) are read
here and nowhere else; the judges themselves take plain keyword arguments.
"""

import threading

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from .base import Judge
from .cascade import CascadeJudge
from .deterministic import DeterministicJudge
from .llm import LLMJudge

JUDGE_CHOICES = ("deterministic", "llm", "cascade")


def judge_from_settings() -> Judge:
    """A new judge as `SELFEVAL_JUDGE` names it (the caller closes it)."""
    choice = settings.SELFEVAL_JUDGE or "deterministic"
    if choice not in JUDGE_CHOICES:
        raise ImproperlyConfigured(f"SELFEVAL_JUDGE must be one of {', '.join(JUDGE_CHOICES)}, got {choice!r}")
    deterministic = DeterministicJudge()
    if choice == "deterministic":
        return deterministic
    llm = LLMJudge(
        base_url=settings.SELFEVAL_LLM_BASE_URL,
        model=settings.SELFEVAL_LLM_MODEL,
        api_key=settings.SELFEVAL_LLM_API_KEY,
        timeout=settings.SELFEVAL_LLM_TIMEOUT,
        retries=settings.SELFEVAL_LLM_RETRIES,
        backoff=settings.SELFEVAL_LLM_RETRY_BACKOFF,
        cache_seconds=settings.SELFEVAL_LLM_CACHE_SECONDS,
        fallback=deterministic,
    )
    return llm if choice == "llm" else CascadeJudge(first=deterministic, second=llm)


_lock = threading.Lock()
_judge: Judge | None = None


def judge_get() -> Judge:
    """This process's judge, built on first use (one HTTP client per worker for the LLM judge)."""
    global _judge
    if _judge is None:
        with _lock:
            if _judge is None:
                _judge = judge_from_settings()
    return _judge


def judge_reset() -> None:
    """Close and forget this process's judge (worker shutdown, tests, changed settings)."""
    global _judge
    with _lock:
        judge, _judge = _judge, None
    if judge is not None:
        judge.close()


@receiver(setting_changed)
def _judge_settings_changed(*, setting: str, **kwargs) -> None:
    if setting == "SELFEVAL_JUDGE" or setting.startswith("SELFEVAL_LLM_"):
        judge_reset()
