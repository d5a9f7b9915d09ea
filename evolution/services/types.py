"""Plain data shared by the evolution producers: thresholds in force and the verification result."""

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    """Seed document 004's thresholds table (默认阈值), with its defaults."""

    min_confidence: float = 0.7
    min_improvement_ratio: float = 1.2
    min_length: int = 500
    min_user_satisfaction: float = 4.0
    max_competitor_rank: int = 2
    min_structure_score: float = 0.6

    @classmethod
    def from_row(cls, row: Any) -> "Thresholds":
        """The values of the stored row (`VerificationThresholds`, one attribute per threshold)."""
        return cls(**{f.name: getattr(row, f.name) for f in fields(cls)})

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


@dataclass(frozen=True)
class UserFeedback:
    satisfaction: float
    comments: str = ""


@dataclass
class VerificationResult:
    """Seed document 004's VerificationResult. `metrics` holds one key per dimension (`basic`,
    `structure`, `quality`, `competitors`, `user_feedback`) plus `decision`; never flattened.
    Every reason and suggestion starts with the metric behind it: `"structure.structure_score: ..."`."""

    is_valid: bool
    confidence: float
    reasons: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    log_id: int | None = field(default=None, compare=False)  # the VerificationLog row, once logged

    def to_dict(self) -> dict[str, Any]:
        return {
            "is_valid": self.is_valid,
            "confidence": self.confidence,
            "reasons": list(self.reasons),
            "suggestions": list(self.suggestions),
            "metrics": self.metrics,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "VerificationResult":
        return cls(
            is_valid=data["is_valid"],
            confidence=data["confidence"],
            reasons=list(data["reasons"]),
            suggestions=list(data["suggestions"]),
            metrics=data["metrics"],
        )
