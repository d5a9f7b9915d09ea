"""Values of span attributes, in both conventions: the text of an input or an output, JSON-string
attributes, plain text. Shared by the mapping (mapping.py); pure."""

import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from otlp.spans import SpanRecord

_MESSAGE_ATTRIBUTE = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(role|content)$")
# Keys under which a JSON `input.value` usually holds the user's text (LangChain, LlamaIndex, ...).
_TEXT_KEYS = ("input", "query", "question", "message", "content", "text", "prompt")


def input_text(span: SpanRecord) -> str | None:
    """The span's input: OpenInference `input.value`, GenAI messages, `llm.input_messages`, `gen_ai.prompt`."""
    value = span.attributes.get("input.value")
    if value is not None:
        return _text_of(value, span.attributes.get("input.mime_type"))
    return (
        _message_text(span.attributes.get("gen_ai.input.messages"), role="user")
        or _indexed_message_text(span, "input", role="user")
        or _prompt_text(_attr_or_event(span, "gen_ai.prompt"), role="user")
    )


def output_text(span: SpanRecord) -> str | None:
    """The span's output, read as `input_text` reads the input (assistant messages)."""
    value = span.attributes.get("output.value")
    if value is not None:
        return _text_of(value, span.attributes.get("output.mime_type"))
    return (
        _message_text(span.attributes.get("gen_ai.output.messages"), role="assistant")
        or _indexed_message_text(span, "output", role="assistant")
        or _prompt_text(_attr_or_event(span, "gen_ai.completion"), role="assistant")
    )


def _text_of(value: Any, mime_type: Any) -> str | None:
    """A JSON input or output (`*.mime_type=application/json`) gives its text: the string itself, the
    last user message of a `messages` list, the value of one of _TEXT_KEYS, or its only string."""
    if not isinstance(value, str):
        return plain(value)
    if mime_type != "application/json":
        return value
    data = json_value(value)
    if isinstance(data, str):
        return data
    if isinstance(data, dict):
        messages = _message_text(data.get("messages"), role="user")
        if messages:
            return messages
        for key in _TEXT_KEYS:
            if isinstance(data.get(key), str):
                return data[key]
        strings = [v for v in data.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
    return value


def _message_text(messages: Any, *, role: str) -> str | None:
    """The text of the last `role` message of GenAI's structured messages (`parts` of type text)
    or of chat-completion style messages (`content`)."""
    messages = json_value(messages)
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role", role) != role:
            continue
        content = message.get("content")
        if isinstance(content, str) and content:
            return content
        parts = message.get("parts") if isinstance(message.get("parts"), list) else content
        if isinstance(parts, list):
            texts = [
                str(part.get("content") or part.get("text") or "")
                for part in parts
                if isinstance(part, dict) and part.get("type", "text") == "text"
            ]
            text = "\n".join(t for t in texts if t)
            if text:
                return text
    return None


def _indexed_message_text(span: SpanRecord, direction: str, *, role: str) -> str | None:
    """OpenInference's flattened `llm.input_messages.N.message.{role,content}`."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _MESSAGE_ATTRIBUTE.match(key)
        if match and match[1] == direction:
            messages.setdefault(int(match[2]), {})[match[3]] = value
    return _message_text([messages[i] for i in sorted(messages)], role=role) if messages else None


def _prompt_text(value: Any, *, role: str) -> str | None:
    """`gen_ai.prompt` / `gen_ai.completion`: plain text, or a JSON list of messages."""
    if value is None:
        return None
    messages = _message_text(value, role=role)
    if messages:
        return messages
    return value if isinstance(value, str) else plain(value)


def _attr_or_event(span: SpanRecord, key: str) -> Any:
    """An attribute of the span, else of one of its events (older GenAI instrumentations log
    `gen_ai.prompt` / `gen_ai.completion` on `gen_ai.content.*` events)."""
    if key in span.attributes:
        return span.attributes[key]
    return next((event.attributes[key] for event in span.events if key in event.attributes), None)


def first_value(spans: Iterable[SpanRecord], read: Callable[[SpanRecord], Any]) -> Any:
    """What `read` gives for the first span that has a value."""
    for span in spans:
        value = read(span)
        if value is not None and value != "":
            return value
    return None


def attr_text(span: SpanRecord, key: str) -> str | None:
    value = span.attributes.get(key)
    return None if value is None or value == "" else plain(value)


def plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def json_value(value: Any) -> Any:
    """A JSON-string attribute decoded (an OTLP map or array is already a value); text that is not
    JSON stays text, for the session serializer to refuse by field name if it must be an object."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def iso_time(ns: int) -> str:
    seconds, remainder = divmod(ns, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=remainder // 1000)
    return moment.isoformat().replace("+00:00", "Z")
