"""One span as SelfEval keeps it: the typed reader and writer of `BufferedSpan.record`.

Spans are taken out of an OTLP `ExportTraceServiceRequest` one by one: a span that breaks a limit
or is malformed is refused alone (it counts in the response's partial success), the rest go on.
Attribute values become plain JSON values (OTLP maps become objects, arrays lists, bytes base64).
Resource attributes named `selfeval.*` apply to every span of their resource unless the span
sets them itself: an agent that only diagnoses alerts can say `selfeval.mode=aiops` once.
"""

import base64
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, SpanFlags, Status

STATUS_ERROR = Status.STATUS_CODE_ERROR
# Span.flags bits 8 and 9 (OTLP 1.x): whether the parent's remoteness is known, and whether it is remote.
_PARENT_IS_REMOTE = SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
_RESOURCE_DEFAULTS_PREFIX = "selfeval."


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SpanRecord:
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    error: bool
    status_message: str
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...] = ()
    parent_is_remote: bool = False

    @property
    def is_root_candidate(self) -> bool:
        """No parent, or a parent in another process: where this service's part of the trace starts."""
        return not self.parent_span_id or self.parent_is_remote

    @property
    def duration_ms(self) -> int:
        return round((self.end_ns - self.start_ns) / 1_000_000)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "spanId": self.span_id,
            "parentSpanId": self.parent_span_id,
            "name": self.name,
            "start": self.start_ns,
            "end": self.end_ns,
            "error": self.error,
            "statusMessage": self.status_message,
            "attributes": self.attributes,
            "events": [{"name": e.name, "time": e.time_ns, "attributes": e.attributes} for e in self.events],
        }
        if self.parent_is_remote:
            data["parentIsRemote"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SpanRecord":
        return cls(
            span_id=data["spanId"],
            parent_span_id=data["parentSpanId"],
            name=data["name"],
            start_ns=data["start"],
            end_ns=data["end"],
            error=data["error"],
            status_message=data["statusMessage"],
            attributes=data["attributes"],
            events=tuple(SpanEvent(e["name"], e["time"], e["attributes"]) for e in data["events"]),
            parent_is_remote=data.get("parentIsRemote", False),
        )


class SpanRefused(ValueError):
    """This span cannot be kept; the message says why (it reaches the exporter's log). `trace_id` is
    the trace the span names, so that the refusal is counted on it ("" when it names none)."""

    trace_id: str = ""


@dataclass(frozen=True, slots=True)
class IncomingSpan:
    trace_id: str
    record: SpanRecord
    size: int


def spans_from_request(
    message: ExportTraceServiceRequest, *, max_attribute_bytes: int
) -> Iterator[IncomingSpan | SpanRefused]:
    """Every span of the request, in order: an `IncomingSpan`, or a `SpanRefused` saying why not."""
    for resource_spans in message.resource_spans:
        defaults = {
            kv.key: kv.value
            for kv in resource_spans.resource.attributes
            if kv.key.startswith(_RESOURCE_DEFAULTS_PREFIX)
        }
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                try:
                    yield _incoming(span, defaults, max_attribute_bytes)
                except SpanRefused as refused:
                    refused.trace_id = _trace_id(span.trace_id)
                    yield refused


def _incoming(span: Span, defaults: dict[str, AnyValue], max_attribute_bytes: int) -> IncomingSpan:
    span_id = _span_id(span.span_id, "span_id", span.name)
    where = f"span {span_id}"
    trace_id = _trace_id(span.trace_id)
    if not trace_id:
        raise SpanRefused(f"{where}: trace_id must be 16 bytes, not all zero")
    if span.parent_span_id:
        parent = _span_id(span.parent_span_id, "parent_span_id", span.name)
        if parent == span_id:
            raise SpanRefused(f"{where}: is its own parent")
    else:
        parent = ""
    if not span.start_time_unix_nano or not span.end_time_unix_nano:
        raise SpanRefused(f"{where}: start_time_unix_nano and end_time_unix_nano are required")
    if span.end_time_unix_nano < span.start_time_unix_nano:
        raise SpanRefused(f"{where}: ends before it starts")
    record = SpanRecord(
        span_id=span_id,
        parent_span_id=parent,
        name=_text(span.name, where, "name"),
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        error=span.status.code == STATUS_ERROR,
        status_message=_text(span.status.message, where, "status.message"),
        attributes=_attributes([*span.attributes], defaults, where, max_attribute_bytes),
        events=tuple(
            SpanEvent(
                name=_text(event.name, where, "event name"),
                time_ns=event.time_unix_nano,
                attributes=_attributes([*event.attributes], {}, f"{where} event {event.name!r}", max_attribute_bytes),
            )
            for event in span.events
        ),
        parent_is_remote=bool(parent) and span.flags & _PARENT_IS_REMOTE == _PARENT_IS_REMOTE,
    )
    return IncomingSpan(trace_id=trace_id, record=record, size=span.ByteSize())


def _trace_id(raw: bytes) -> str:
    """The trace's 32 hex digits; "" when the bytes name no trace (not 16 bytes, or all zero)."""
    return raw.hex() if len(raw) == 16 and any(raw) else ""


def _span_id(raw: bytes, field: str, name: str) -> str:
    if len(raw) != 8 or not any(raw):
        raise SpanRefused(f"span {name[:100]!r}: {field} must be 8 bytes, not all zero")
    return raw.hex()


def _attributes(pairs: list[KeyValue], defaults: dict[str, AnyValue], where: str, max_bytes: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    # The span's own attributes come last and win over its resource's defaults.
    for key, value in [*defaults.items(), *((kv.key, kv.value) for kv in pairs)]:
        size = value.ByteSize()
        if size > max_bytes:
            raise SpanRefused(
                f"{where}: attribute {key!r} is {size} bytes, over the limit of {max_bytes} "
                "(SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES)"
            )
        result[_text(key, where, "attribute key")] = _value(value, where, key)
    return result


def _value(value: AnyValue, where: str, key: str) -> Any:
    match value.WhichOneof("value"):
        case "string_value":
            return _text(value.string_value, where, key)
        case "bool_value":
            return value.bool_value
        case "int_value":
            return value.int_value
        case "double_value":
            # JSON (and PostgreSQL's jsonb) has no NaN or infinity.
            return value.double_value if math.isfinite(value.double_value) else None
        case "array_value":
            return [_value(item, where, key) for item in value.array_value.values]
        case "kvlist_value":
            return {_text(kv.key, where, key): _value(kv.value, where, key) for kv in value.kvlist_value.values}
        case "bytes_value":
            return base64.b64encode(value.bytes_value).decode("ascii")
        case _:
            return None


def _text(value: str, where: str, field: str) -> str:
    if "\x00" in value:
        # PostgreSQL stores no NUL character in text or jsonb.
        raise SpanRefused(f"{where}: {field!s} contains a NUL character")
    return value
