"""A buffered trace becomes a session: through the session API's serializer and ingestion service."""

from dataclasses import dataclass

from django.utils import timezone
from rest_framework.exceptions import ValidationError

from core.api.errors import flatten_field_errors
from diagnosis.serializers import SessionIngest, session_ingest_from_body
from diagnosis.services.ingestion import session_upsert
from otlp.models import BufferedTrace, TraceState
from otlp.services.mapping import MappedSession, MatchThresholds, session_payload_from_spans
from otlp.spans import SpanRecord

_MAX_FIELD_MESSAGES = 5
INPUT_ATTRIBUTES = (
    "input.value, gen_ai.input.messages, gen_ai.prompt, llm.input_messages, langfuse.observation.input "
    "or traceloop.entity.input"
)


@dataclass(frozen=True, slots=True)
class Mapped:
    """A trace's session payload, validated: `data` to ingest, or `error` saying why not."""

    mapped: MappedSession
    data: SessionIngest | None
    error: str

    @property
    def session_id(self) -> str:
        return str(self.mapped.payload.get("sessionId"))


def buffered_trace_map(*, trace: BufferedTrace, records: list[SpanRecord], thresholds: MatchThresholds) -> Mapped:
    """The session payload of the trace's spans, judged by `session_ingest_from_body` as the session
    API judges a posted one: every rule and limit of `POST /api/sessions` applies."""
    mapped = session_payload_from_spans(trace_id=trace.trace_id, spans=records, thresholds=thresholds)
    try:
        return Mapped(mapped=mapped, data=session_ingest_from_body(mapped.payload), error="")
    except ValidationError as error:
        fields = flatten_field_errors(error.detail)
    if "query" in fields and not mapped.payload.get("query"):
        fields["query"] = [f"no span has an input: set one of {INPUT_ATTRIBUTES} (on the root span)"]
    described = " ".join(
        f"{name}: {' '.join(messages)}" for name, messages in list(fields.items())[:_MAX_FIELD_MESSAGES]
    )
    more = len(fields) - _MAX_FIELD_MESSAGES
    return Mapped(
        mapped=mapped,
        data=None,
        error=f"not a valid session: {described}" + (f" (and {more} more)" if more > 0 else ""),
    )


def buffered_trace_ingest(*, trace: BufferedTrace, mapped: Mapped) -> None:
    """Create or replace the trace's session (`session_upsert`, idempotent) and record it on the trace.

    Call inside a transaction holding the trace's row lock, with a `mapped` whose `data` is valid;
    the caller saves the trace.
    """
    assert mapped.data is not None
    result = session_upsert(project=trace.project, data=mapped.data)
    trace.state = TraceState.INGESTED if mapped.mapped.root_span_id else TraceState.PARTIAL
    trace.session = result.session
    trace.ingested_as = result.session.session_id
    trace.root_span_id = mapped.mapped.root_span_id
    trace.ingested_at = timezone.now()
    trace.ingest_count += 1
    trace.error = ""


TRACE_UPDATE_FIELDS = [
    "state",
    "session",
    "ingested_as",
    "root_span_id",
    "span_count",
    "stored_bytes",
    "rejected_spans",
    "last_rejection",
    "last_rejected_at",
    "error",
    "last_span_at",
    "ingested_at",
    "ingest_count",
    "spans_purged_at",
]
