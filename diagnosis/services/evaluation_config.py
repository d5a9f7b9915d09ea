"""The evaluation settings, read once per process, and the one judge of this process.

`evaluation_config()` reads `SELFEVAL_VERIFIER_THRESHOLDS`, `SELFEVAL_AIOPS_TOOL_CATEGORIES`,
`SELFEVAL_JUDGE` and `SELFEVAL_LLM_*` (defaults: `config/settings/base.py`) into the frozen
`producers.config.EvaluationConfig` the pipeline receives. `evaluation_judge()` is the configured
judge, built on first use and reused by every evaluation of the process (a web worker thread or
a `db_worker`): the LLM judge keeps one HTTP connection pool instead of opening one per session.
It is closed at interpreter exit (`atexit`: gunicorn workers and `manage.py db_worker` exit
normally) and whenever a test changes one of these settings (`setting_changed`), which also
drops the cached config so the next evaluation reads the new values.
"""

import atexit
import threading
from functools import cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from diagnosis.services.producers.config import EvaluationConfig, LLMJudgeConfig, VerifierThresholds
from diagnosis.services.producers.judges import JUDGE_CHOICES, Judge, judge_build

_SETTINGS = {"SELFEVAL_VERIFIER_THRESHOLDS", "SELFEVAL_AIOPS_TOOL_CATEGORIES", "SELFEVAL_JUDGE"}


@cache
def evaluation_config() -> EvaluationConfig:
    """This process's evaluation settings; ImproperlyConfigured names what is wrong."""
    thresholds = settings.SELFEVAL_VERIFIER_THRESHOLDS
    expected = {"pass_groundedness", "reject_groundedness"}
    if not isinstance(thresholds, dict) or set(thresholds) != expected:
        raise ImproperlyConfigured(f"SELFEVAL_VERIFIER_THRESHOLDS must have exactly the keys {sorted(expected)}")
    judge = settings.SELFEVAL_JUDGE
    if judge not in JUDGE_CHOICES:
        raise ImproperlyConfigured(f"SELFEVAL_JUDGE must be one of {', '.join(JUDGE_CHOICES)}, got {judge!r}")
    llm = None
    if judge != "deterministic":
        if not (settings.SELFEVAL_LLM_BASE_URL and settings.SELFEVAL_LLM_MODEL):
            raise ImproperlyConfigured(f"SELFEVAL_JUDGE={judge} needs SELFEVAL_LLM_BASE_URL and SELFEVAL_LLM_MODEL")
        llm = LLMJudgeConfig(
            base_url=settings.SELFEVAL_LLM_BASE_URL,
            model=settings.SELFEVAL_LLM_MODEL,
            api_key=settings.SELFEVAL_LLM_API_KEY,
            timeout=float(settings.SELFEVAL_LLM_TIMEOUT),
            retries=int(settings.SELFEVAL_LLM_RETRIES),
            backoff=float(settings.SELFEVAL_LLM_RETRY_BACKOFF),
            max_wait=float(settings.SELFEVAL_LLM_RETRY_MAX_WAIT),
            cache_seconds=int(settings.SELFEVAL_LLM_CACHE_SECONDS),
        )
    return EvaluationConfig(
        thresholds=VerifierThresholds(**{name: float(value) for name, value in thresholds.items()}),
        tool_categories={
            category: tuple(tool.lower() for tool in tools)
            for category, tools in settings.SELFEVAL_AIOPS_TOOL_CATEGORIES.items()
        },
        judge=judge,
        llm=llm,
    )


_lock = threading.Lock()
_judge: Judge | None = None


def evaluation_judge() -> Judge:
    """This process's judge, built from `evaluation_config()` on first use."""
    global _judge
    if _judge is None:
        with _lock:
            if _judge is None:
                _judge = judge_build(config=evaluation_config())
    return _judge


@atexit.register
def evaluation_config_reset() -> None:
    """Close this process's judge and forget it and the config (exit, changed settings)."""
    global _judge
    with _lock:
        judge, _judge = _judge, None
        evaluation_config.cache_clear()
    if judge is not None:
        judge.close()


@receiver(setting_changed)
def _evaluation_setting_changed(*, setting: str, **kwargs) -> None:
    if setting in _SETTINGS or setting.startswith("SELFEVAL_LLM_"):
        evaluation_config_reset()
