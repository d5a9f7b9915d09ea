"""Judges: does the verified evidence entail one claim? One small protocol, three implementations.

- `DeterministicJudge` (deterministic.py): the `judge` package's calibrated decision, offline;
- `LLMJudge` (llm.py): an OpenAI-compatible endpoint, the deterministic judge as fallback;
- `CascadeJudge` (cascade.py): deterministic first, the LLM judge only for the undecided band.
`judge_build` builds the configured one (`services.evaluation_config.evaluation_judge` keeps one per process).
"""

from .base import (
    CONTRADICTED,
    JUDGE_VERDICTS,
    NO_EVIDENCE,
    SUPPORTED,
    UNSUPPORTED,
    Judge,
    JudgeInput,
    Judgement,
)
from .cascade import CascadeJudge
from .deterministic import DeterministicJudge
from .factory import JUDGE_CHOICES, judge_build
from .llm import LLMJudge

__all__ = [
    "CONTRADICTED", "JUDGE_CHOICES", "JUDGE_VERDICTS", "NO_EVIDENCE", "SUPPORTED", "UNSUPPORTED", "CascadeJudge",
    "DeterministicJudge", "Judge", "JudgeInput", "Judgement", "LLMJudge", "judge_build",
]  # fmt: skip
