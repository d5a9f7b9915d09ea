"""The one place that turns the evaluation config into a judge.

`EvaluationConfig.judge` (`SELFEVAL_JUDGE`): "deterministic" (default, offline), "llm" (the LLM
judge for every claim, the deterministic judge as its fallback) or "cascade" (deterministic
first, the LLM judge only for the claims it leaves in the undecided band). The process's
judge is built once from it by `diagnosis.services.evaluation_config.evaluation_judge`.
"""

from ..config import EvaluationConfig
from .base import Judge
from .cascade import CascadeJudge
from .deterministic import DeterministicJudge
from .llm import LLMJudge

JUDGE_CHOICES = ("deterministic", "llm", "cascade")


def judge_build(*, config: EvaluationConfig) -> Judge:
    """A new judge as `config` names it; the caller closes it."""
    deterministic = DeterministicJudge()
    if config.llm is None:
        return deterministic
    llm = LLMJudge(
        base_url=config.llm.base_url,
        model=config.llm.model,
        api_key=config.llm.api_key,
        timeout=config.llm.timeout,
        retries=config.llm.retries,
        backoff=config.llm.backoff,
        max_wait=config.llm.max_wait,
        cache_seconds=config.llm.cache_seconds,
        fallback=deterministic,
    )
    return llm if config.judge == "llm" else CascadeJudge(first=deterministic, second=llm)
