"""Values of span attributes, in both conventions: the text of an input or an output, JSON-string
attributes, plain text. Shared by the mapping (mapping.py); pure."""

import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from otlp.spans import SpanRecord

_MESSAGE_ATTRIBUTE = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(role|content)$")
# OpenLLMetry's flattened prompts and completions: gen_ai.prompt.0.content, gen_ai.completion.0.role, ...
_INDEXED_PROMPT = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(role|content)$")
# The same value under the names of each convention, first match wins.
CONVERSATION_ATTRIBUTES = (
    "session.id",  # OpenInference, Langfuse
    "gen_ai.conversation.id",  # OpenTelemetry GenAI
    "traceloop.association.properties.session_id",  # OpenLLMetry
    "langfuse.session.id",  # Langfuse SDK v2
)
USER_ATTRIBUTES = ("user.id", "enduser.id", "traceloop.association.properties.user_id", "langfuse.user.id")
TAG_ATTRIBUTES = ("langfuse.trace.tags", "tag.tags")  # Langfuse, OpenInference (using_tags)
TRACE_NAME_ATTRIBUTE = "langfuse.trace.name"
# Langfuse: the trace's metadata as one JSON object, or a key each (`langfuse.trace.metadata.<key>`,
# JSON-encoded values: what propagate_attributes(metadata=...) writes on every span).
TRACE_METADATA_ATTRIBUTE = "langfuse.trace.metadata"
# Langfuse SDK v3's update_trace(input=..., output=...): the trace's own input and output, on the
# span that set them (the later SDKs take the root observation's).
TRACE_INPUT_ATTRIBUTE, TRACE_OUTPUT_ATTRIBUTE = "langfuse.trace.input", "langfuse.trace.output"
_TOKEN_ATTRIBUTES = {
    "inputTokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
    "outputTokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
    "totalTokens": ("llm.usage.total_tokens", "llm.token_count.total", "gen_ai.usage.total_tokens"),
}
_LANGFUSE_USAGE = {"inputTokens": "input", "outputTokens": "output", "totalTokens": "total"}
# Keys under which a JSON `input.value` usually holds the user's text (LangChain, LlamaIndex, ...).
_TEXT_KEYS = ("input", "query", "question", "message", "content", "text", "prompt")


def input_text(span: SpanRecord) -> str | None:
    """The span's input: OpenInference `input.value`, GenAI messages, `llm.input_messages`, `gen_ai.prompt`
    (also OpenLLMetry's `gen_ai.prompt.N.*`), Langfuse's `langfuse.observation.input`, OpenLLMetry's
    `traceloop.entity.input`."""
    value = span.attributes.get("input.value")
    if value is not None:
        return _text_of(value, span.attributes.get("input.mime_type"))
    return (
        _message_text(span.attributes.get("gen_ai.input.messages"), role="user")
        or _indexed_message_text(span, "input", role="user")
        or _prompt_text(_attr_or_event(span, "gen_ai.prompt"), role="user")
        or _message_text(_indexed_prompts(span, "prompt"), role="user")
        or _json_text(span.attributes.get("langfuse.observation.input"), role="user")
        or _json_text(span.attributes.get("traceloop.entity.input"), role="user")
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
        or _message_text(_indexed_prompts(span, "completion"), role="assistant")
        or _json_text(span.attributes.get("langfuse.observation.output"), role="assistant")
        or _json_text(span.attributes.get("traceloop.entity.output"), role="assistant")
    )


def conversation_id(span: SpanRecord) -> str | None:
    """The conversation (chat session) the span's trace is a turn of."""
    return first_value(
        [span], lambda s: next((attr_text(s, k) for k in CONVERSATION_ATTRIBUTES if attr_text(s, k)), None)
    )


def user_id(span: SpanRecord) -> str | None:
    return next((attr_text(span, key) for key in USER_ATTRIBUTES if attr_text(span, key)), None)


def trace_input_text(span: SpanRecord) -> str | None:
    """The trace's input as Langfuse v3 sets it (`langfuse.trace.input`), read as an observation's."""
    return _json_text(span.attributes.get(TRACE_INPUT_ATTRIBUTE), role="user")


def trace_output_text(span: SpanRecord) -> str | None:
    return _json_text(span.attributes.get(TRACE_OUTPUT_ATTRIBUTE), role="assistant")


def tags(span: SpanRecord) -> list[str]:
    """The trace's tags the span carries (an OTLP array, or a JSON array in a string)."""
    for key in TAG_ATTRIBUTES:
        value = json_value(span.attributes.get(key))
        if isinstance(value, list):
            found = [plain(tag) for tag in value if tag is not None and tag != ""]
            if found:
                return found
        elif value is not None and value != "":
            return [plain(value)]
    return []


def trace_metadata(span: SpanRecord) -> dict[str, Any]:
    """The trace's metadata the span carries: `langfuse.trace.metadata` (an object), then each
    `langfuse.trace.metadata.<key>` (its JSON value decoded)."""
    whole = json_value(span.attributes.get(TRACE_METADATA_ATTRIBUTE))
    metadata: dict[str, Any] = dict(whole) if isinstance(whole, dict) else {}
    prefix = f"{TRACE_METADATA_ATTRIBUTE}."
    for key, value in span.attributes.items():
        if key.startswith(prefix) and len(key) > len(prefix):
            metadata[key[len(prefix) :]] = json_value(value)
    return metadata


def token_counts(span: SpanRecord) -> dict[str, int]:
    """Input, output and total tokens of an LLM span, in any convention (Langfuse: usage_details)."""
    counts: dict[str, int] = {}
    usage = json_value(span.attributes.get("langfuse.observation.usage_details"))
    for name, keys in _TOKEN_ATTRIBUTES.items():
        value = next((span.attributes[key] for key in keys if key in span.attributes), None)
        if value is None and isinstance(usage, dict):
            value = usage.get(_LANGFUSE_USAGE[name])
        number = as_number(value)
        if number is not None and number >= 0:
            counts[name] = int(number)
    return counts


def _json_text(value: Any, *, role: str) -> str | None:
    """The text of a JSON-encoded input or output (Langfuse observations, OpenLLMetry entities): the
    string itself, messages, a dict's text key (also under OpenLLMetry's `inputs` / `kwargs` / `args`)."""
    if value is None:
        return None
    data = json_value(value)
    if isinstance(data, str):
        return data or None
    if isinstance(data, list):
        return _message_text(data, role=role) or next((item for item in data if isinstance(item, str)), None)
    if isinstance(data, dict):
        for wrapper in ("inputs", "kwargs", "outputs"):
            if isinstance(data.get(wrapper), dict | str):
                found = _json_text(data[wrapper], role=role)
                if found:
                    return found
        arguments = data.get("args")
        if isinstance(arguments, list):
            found = next((item for item in arguments if isinstance(item, str) and item), None)
            if found:
                return found
        text = _text_of(json.dumps(data, ensure_ascii=False), "application/json")
        return text if text and not text.startswith("{") else None
    return plain(data)


def _indexed_prompts(span: SpanRecord, direction: str) -> list[dict[str, Any]] | None:
    """OpenLLMetry's flattened `gen_ai.prompt.N.{role,content}` / `gen_ai.completion.N.*` as messages."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _INDEXED_PROMPT.match(key)
        if match and match[1] == direction:
            messages.setdefault(int(match[2]), {})[match[3]] = value
    return [messages[i] for i in sorted(messages)] if messages else None


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
