"""A trace's spans -> a `POST /api/sessions` payload, following the OpenTelemetry GenAI semantic
conventions and OpenInference alike. Pure: plain records in, a plain payload out; the session
API's serializer then judges the payload exactly as it judges one posted by an agent.

The mapping (docs/otlp.md documents it for users):
- the trace is the session: `sessionId` is the root span's `session.id` (OpenInference), else the
  trace id in hex. The root is the span without a parent (else the earliest span whose parent is
  in another process and was not received). Without a root (the sweep ingesting a trace whose root
  never arrived) the session is RUNNING, starts at the earliest span and has no end.
- query and answer: the root's input and output (`input.value` / `output.value`, `gen_ai.input.messages`
  / `gen_ai.output.messages`, `llm.input_messages` / `llm.output_messages`, `gen_ai.prompt` /
  `gen_ai.completion`, also as span events); when the root has none, the first span that has an
  input and the last span that has an output (in practice the first and the last LLM call).
- status: root status ERROR -> FAILED, else SUCCEEDED; createdAt / finishedAt: the root's start / end.
- `selfeval.mode` (chat | aiops, default chat), `selfeval.alert` and `selfeval.active_alerts`
  (JSON, or OTLP maps, shaped as the session API's `alert` / `activeAlerts`) and
  `selfeval.executor_output` (executor_evidence_v2 JSON whose refIds are retrieval document ids):
  on the root, else on the first span that carries them (executor output: the last).
- TOOL spans (`openinference.span.kind=TOOL` or `gen_ai.operation.name=execute_tool`) are tool
  invocations; RETRIEVER spans (`openinference.span.kind=RETRIEVER` or `gen_ai.operation.name=retrieval`)
  give retrieval details to their nearest TOOL ancestor, or are invocations of their own; every other
  span is a step, in start order. An invocation's `stepIndex` is its nearest step ancestor.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from otlp.services.attributes import (
    TRACE_NAME_ATTRIBUTE,
    as_number,
    attr_text,
    conversation_id,
    first_value,
    input_text,
    iso_time,
    json_value,
    output_text,
    plain,
    tags,
    token_counts,
    trace_input_text,
    trace_metadata,
    trace_output_text,
    user_id,
)
from otlp.spans import SpanRecord

OPENINFERENCE_KIND = "openinference.span.kind"
GENAI_OPERATION = "gen_ai.operation.name"
LANGFUSE_OBSERVATION_TYPE = "langfuse.observation.type"
TRACELOOP_SPAN_KIND = "traceloop.span.kind"
MATCH_LEVEL = "selfeval.match_level"
_DOCUMENT_ATTRIBUTE = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|content|score|metadata|url|name)$")
_SOURCE_KEYS = ("source", "url", "uri", "file_path")
_LEVEL_ORDER = {"L0": 0, "L1": 1, "NONE": 2}


@dataclass(frozen=True, slots=True)
class MatchThresholds:
    """Best document score -> match level, when a retrieval span does not say `selfeval.match_level`."""

    l0: float
    l1: float


@dataclass(frozen=True, slots=True)
class MappedSession:
    payload: dict[str, Any]
    root_span_id: str  # "" when the trace has no root


def session_payload_from_spans(
    *, trace_id: str, spans: Iterable[SpanRecord], thresholds: MatchThresholds
) -> MappedSession:
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.span_id))
    by_id = {span.span_id: span for span in ordered}
    root = _root(ordered, by_id)
    tree = _Tree(by_id)
    rest = [span for span in ordered if span is not root]
    kinds = {span.span_id: _kind(span) for span in rest}

    # A tool (or a lone retriever) with no step above it is a step of its own, so that the agent's
    # top-level calls show in the execution as the steps they are.
    steps = [
        span
        for span in rest
        if kinds[span.span_id] == "step"
        or (
            _is_invocation(span, kinds, tree)
            and not any(kinds.get(a.span_id) == "step" for a in tree.ancestors(span) if a is not root)
        )
    ]
    step_index = {span.span_id: index for index, span in enumerate(steps)}
    invocations = _invocations(rest, kinds, tree, step_index, thresholds)

    first = [root, *rest] if root else rest
    last_first = [root, *reversed(rest)] if root else list(reversed(rest))
    payload: dict[str, Any] = {
        "sessionId": first_value(first, lambda s: attr_text(s, "selfeval.session_id")) or trace_id,
        "conversationId": first_value(first, conversation_id),
        "mode": first_value(first, lambda s: s.attributes.get("selfeval.mode")) or "chat",
        # The root's own input, else the trace's (Langfuse v3's, on any span), else the first span's;
        # the answer alike, from the last.
        "query": first_value([root] if root else [], input_text)
        or first_value(ordered, trace_input_text)
        or first_value(rest, input_text)
        or "",
        "answer": first_value([root] if root else [], output_text)
        or first_value(reversed(ordered), trace_output_text)
        or first_value(reversed(rest), output_text)
        or "",
        "status": ("FAILED" if _failed(root) else "SUCCEEDED") if root else "RUNNING",
        "error": _error(root) if root else None,
        "createdAt": iso_time(root.start_ns if root else ordered[0].start_ns) if ordered else None,
        "finishedAt": iso_time(root.end_ns) if root else None,
        "steps": [_step(index, span) for index, span in enumerate(steps)],
        "toolInvocations": invocations,
    }
    for key, attribute in (("alert", "selfeval.alert"), ("activeAlerts", "selfeval.active_alerts")):
        value = first_value(first, lambda s, a=attribute: s.attributes.get(a))
        if value is not None:
            payload[key] = json_value(value)
    executor_output = first_value(last_first, lambda s: s.attributes.get("selfeval.executor_output"))
    if executor_output is not None:
        payload["executorOutput"] = json_value(executor_output)
    return MappedSession(payload=payload, root_span_id=root.span_id if root else "")


def _root(ordered: list[SpanRecord], by_id: dict[str, SpanRecord]) -> SpanRecord | None:
    for span in ordered:
        if not span.parent_span_id:
            return span
    for span in ordered:
        if span.parent_is_remote and span.parent_span_id not in by_id:
            return span
    return None


class _Tree:
    def __init__(self, by_id: dict[str, SpanRecord]) -> None:
        self.by_id = by_id

    def ancestors(self, span: SpanRecord) -> Iterable[SpanRecord]:
        seen = {span.span_id}
        parent = self.by_id.get(span.parent_span_id)
        while parent is not None and parent.span_id not in seen:  # a malformed trace may loop
            yield parent
            seen.add(parent.span_id)
            parent = self.by_id.get(parent.parent_span_id)


def _kind(span: SpanRecord) -> str:
    """tool, retriever or step, in any of the conventions (OpenInference, GenAI, Langfuse, OpenLLMetry)."""
    kinds = {
        str(span.attributes.get(key, "")).upper()
        for key in (OPENINFERENCE_KIND, LANGFUSE_OBSERVATION_TYPE, TRACELOOP_SPAN_KIND)
    }
    operation = span.attributes.get(GENAI_OPERATION)
    if "TOOL" in kinds or operation == "execute_tool":
        return "tool"
    if "RETRIEVER" in kinds or operation == "retrieval":
        return "retriever"
    return "step"


def _is_invocation(span: SpanRecord, kinds: dict[str, str], tree: "_Tree") -> bool:
    """Tool spans, and retrievers without a tool ancestor: what becomes a tool invocation."""
    kind = kinds[span.span_id]
    return kind == "tool" or (
        kind == "retriever" and not any(kinds.get(a.span_id) == "tool" for a in tree.ancestors(span))
    )


def _invocations(
    spans: list[SpanRecord],
    kinds: dict[str, str],
    tree: _Tree,
    step_index: dict[str, int],
    thresholds: MatchThresholds,
) -> list[dict[str, Any]]:
    """Tool spans and retrievers without a tool ancestor, in start order, with their documents."""
    own: list[SpanRecord] = []
    retrievals: dict[str, list[SpanRecord]] = {}  # invocation span id -> its retriever spans
    for span in spans:
        kind = kinds[span.span_id]
        if kind == "tool":
            own.append(span)
        elif kind == "retriever":
            tool = next((a for a in tree.ancestors(span) if kinds.get(a.span_id) == "tool"), None)
            if tool is None:
                own.append(span)
                retrievals.setdefault(span.span_id, []).append(span)
            else:
                retrievals.setdefault(tool.span_id, []).append(span)

    invocation_ids: set[str] = set()
    ref_ids: set[str] = set()
    result = []
    for span in own:
        call_id = attr_text(span, "gen_ai.tool.call.id")
        invocation_id = call_id if call_id and call_id not in invocation_ids else span.span_id
        invocation_ids.add(invocation_id)
        step = step_index.get(span.span_id)
        if step is None:
            step = next((step_index[a.span_id] for a in tree.ancestors(span) if a.span_id in step_index), None)
        retrievers = retrievals.get(span.span_id, [])
        documents = [doc for retriever in retrievers for doc in _documents(retriever)]
        invocation: dict[str, Any] = {
            "invocationId": invocation_id,
            "stepIndex": step,
            "toolName": attr_text(span, "tool.name") or attr_text(span, "gen_ai.tool.name") or span.name,
            "status": "FAILED" if _failed(span) else "SUCCESS",
            "arguments": _arguments(span, is_retriever=kinds[span.span_id] == "retriever"),
            "output": _tool_output(span, documents),
            "error": _error(span),
            "latencyMs": span.duration_ms,
        }
        if retrievers:
            invocation["retrievalDetails"] = {
                "matchLevel": _match_level([span, *retrievers], documents, thresholds),
                "evidenceRefs": _evidence_refs(documents, invocation_id, ref_ids),
            }
        result.append(invocation)
    return result


def _documents(span: SpanRecord) -> list[dict[str, Any]]:
    """OpenInference's flattened `retrieval.documents.N.document.*`, else GenAI's `gen_ai.retrieval.documents`."""
    indexed: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _DOCUMENT_ATTRIBUTE.match(key)
        if match:
            indexed.setdefault(int(match[1]), {})[match[2]] = value
    if indexed:
        return [indexed[i] for i in sorted(indexed)]
    documents = json_value(span.attributes.get("gen_ai.retrieval.documents", []))
    if not isinstance(documents, list):
        return []
    return [{**doc, "content": doc.get("content", doc.get("text"))} for doc in documents if isinstance(doc, dict)]


def _evidence_refs(documents: list[dict[str, Any]], invocation_id: str, taken: set[str]) -> list[dict[str, Any]]:
    """refId = the document id; a document seen again in the session gets `@<invocationId>` (refIds
    are unique per session), one without an id `<invocationId>#<n>`."""
    refs = []
    for number, document in enumerate(documents, start=1):
        ref_id = plain(document.get("id")) or f"{invocation_id}#{number}"
        if ref_id in taken:
            ref_id = f"{ref_id}@{invocation_id}"
        if ref_id in taken:
            ref_id = f"{ref_id}#{number}"
        taken.add(ref_id)
        metadata = json_value(document.get("metadata"))
        source = (
            document.get("url")
            or document.get("name")
            or next((metadata[k] for k in _SOURCE_KEYS if isinstance(metadata, dict) and metadata.get(k)), "")
        )
        content = document.get("content")
        refs.append(
            {
                "refId": ref_id,
                "source": plain(source),
                "content": content if isinstance(content, str) else plain(content),
            }
        )
    return refs


def _match_level(spans: list[SpanRecord], documents: list[dict[str, Any]], thresholds: MatchThresholds) -> Any:
    """`selfeval.match_level` of a retriever (or its tool); else by the best document score:
    >= L0 threshold L0, >= L1 threshold L1, else NONE; documents without scores L1; none NONE."""
    declared = [span.attributes[MATCH_LEVEL] for span in spans if MATCH_LEVEL in span.attributes]
    if declared:
        levels = [str(level).upper() for level in declared]
        # The best one; anything unknown goes on as it is, for the serializer to refuse by name.
        return min(levels, key=lambda level: _LEVEL_ORDER.get(level, -1))
    if not documents:
        return "NONE"
    scores = [score for score in (as_number(doc.get("score")) for doc in documents) if score is not None]
    if not scores:
        return "L1"
    best = max(scores)
    return "L0" if best >= thresholds.l0 else "L1" if best >= thresholds.l1 else "NONE"


def _arguments(span: SpanRecord, *, is_retriever: bool) -> dict[str, Any]:
    if is_retriever:
        query = attr_text(span, "input.value") or attr_text(span, "gen_ai.retrieval.query.text")
        return {"query": query} if query else {}
    for key in ("gen_ai.tool.call.arguments", "input.value", "tool.parameters"):
        if key in span.attributes:
            value = json_value(span.attributes[key])
            return value if isinstance(value, dict) else {"input": value}
    return {}


def _tool_output(span: SpanRecord, documents: list[dict[str, Any]]) -> Any:
    for key in ("gen_ai.tool.call.result", "output.value"):
        if key in span.attributes:
            value = span.attributes[key]
            if key == "output.value" and span.attributes.get("output.mime_type") == "application/json":
                return json_value(value)
            return value
    if documents:  # a retriever's output is its documents (their contents are the evidence refs)
        return [{k: doc[k] for k in ("id", "score", "metadata") if doc.get(k) is not None} for doc in documents]
    return None


def _failed(span: SpanRecord) -> bool:
    return (
        span.error
        or any(event.name == "exception" for event in span.events)
        or span.attributes.get("langfuse.observation.level") == "ERROR"
    )


def _error(span: SpanRecord) -> str | None:
    if not _failed(span):
        return None
    for event in span.events:
        if event.name == "exception":
            kind, message = event.attributes.get("exception.type"), event.attributes.get("exception.message")
            text = ": ".join(str(part) for part in (kind, message) if part)
            if text:
                return text
    return span.status_message or attr_text(span, "langfuse.observation.status_message") or "error"


def _step(index: int, span: SpanRecord) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "spanId": span.span_id,
        "parentSpanId": span.parent_span_id,
        "kind": str(span.attributes.get(OPENINFERENCE_KIND) or span.attributes.get(GENAI_OPERATION) or ""),
        "startedAt": iso_time(span.start_ns),
        "durationMs": span.duration_ms,
    }
    model = next(
        (
            span.attributes[key]
            for key in (
                "gen_ai.response.model",
                "gen_ai.request.model",
                "llm.model_name",
                "langfuse.observation.model.name",
            )
            if span.attributes.get(key)
        ),
        None,
    )
    if model:
        detail["model"] = plain(model)
    detail.update(token_counts(span))
    user = first_value([span], user_id)
    if user:
        detail["user"] = user
    # The trace's tags, name and metadata as the SDK writes them on the span (Langfuse's
    # propagate_attributes: on every span of the trace); the session has no place of its own for them.
    span_tags, name, metadata = tags(span), attr_text(span, TRACE_NAME_ATTRIBUTE), trace_metadata(span)
    if span_tags:
        detail["tags"] = span_tags
    if name:
        detail["traceName"] = name
    if metadata:
        detail["metadata"] = metadata
    error = _error(span)
    if error:
        detail["error"] = error
    return {"index": index, "name": span.name, "status": "FAILED" if error else "SUCCEEDED", "detail": detail}
