"""The receiver's settings, read once per request into one typed object the services take as an argument."""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings


@dataclass(frozen=True, slots=True)
class ReceiverConfig:
    max_body_bytes: int
    max_spans_per_trace: int
    max_attribute_bytes: int
    max_trace_bytes: int
    trace_timeout: timedelta
    span_retention: timedelta
    l0_score: float
    l1_score: float

    @classmethod
    def from_settings(cls) -> "ReceiverConfig":
        return cls(
            max_body_bytes=settings.SELFEVAL_OTLP_MAX_BODY_BYTES,
            max_spans_per_trace=settings.SELFEVAL_OTLP_MAX_SPANS_PER_TRACE,
            max_attribute_bytes=settings.SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES,
            max_trace_bytes=settings.SELFEVAL_OTLP_MAX_TRACE_BYTES,
            trace_timeout=timedelta(minutes=settings.SELFEVAL_OTLP_TRACE_TIMEOUT_MINUTES),
            span_retention=timedelta(hours=settings.SELFEVAL_OTLP_SPAN_RETENTION_HOURS),
            l0_score=settings.SELFEVAL_OTLP_L0_SCORE,
            l1_score=settings.SELFEVAL_OTLP_L1_SCORE,
        )
