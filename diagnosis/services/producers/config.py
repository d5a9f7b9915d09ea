"""The evaluation settings as the producers receive them: frozen, typed, already validated.

Built once per process from Django's settings by `diagnosis.services.evaluation_config` (the only
place that reads them; their defaults are in `config/settings/base.py`) and passed to the
pipeline as an argument: no producer reads settings.
"""

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifierThresholds:
    """`SELFEVAL_VERIFIER_THRESHOLDS`; their meaning is in `verifier.py`."""

    pass_groundedness: float
    reject_groundedness: float


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMJudgeConfig:
    """`SELFEVAL_LLM_*`: the OpenAI-compatible endpoint of the LLM judge."""

    base_url: str
    model: str
    api_key: str
    timeout: float  # seconds per attempt
    retries: int  # after the first attempt
    backoff: float  # seconds: the first retry's wait (doubling after), plus as much random jitter
    max_wait: float  # seconds: the longest wait between two attempts, Retry-After included
    cache_seconds: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationConfig:
    thresholds: VerifierThresholds
    # `SELFEVAL_AIOPS_TOOL_CATEGORIES`: category -> tool names, lowercased (tools compare without case).
    tool_categories: Mapping[str, tuple[str, ...]]
    judge: str  # `SELFEVAL_JUDGE`: "deterministic", "llm" or "cascade"
    llm: LLMJudgeConfig | None  # set when the judge asks an LLM ("llm", "cascade")
