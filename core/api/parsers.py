"""The JSON parsers of every API body: what no database column can store is refused here, once.

`json_loads_checked` is the one JSON decoder of request bodies: the JSON and NDJSON parsers below
and the OTLP/JSON codec (otlp/codec.py) go through it, and so must any new JSON body. It holds the
rules of JSON itself that Python's decoder lets pass: a key twice in one object (the decoder keeps
the last value, silently) and numbers that overflow to infinity; and those of storage: PostgreSQL
refuses NUL (`\\u0000`) in text and JSON, no database driver can encode a lone surrogate
(`\\ud800`), and a body nested thousands of levels deep overflows the recursion of every later
step. Each is a 400 that names the offending field (`toolInvocations.0.arguments.q`), the same on
SQLite and PostgreSQL, so a request either passes on both databases or fails on both.

The checks cost little on ordinary bodies: NaN and Infinity are refused by the decoder, a
duplicate key is noticed as the decoder builds the object (about 0.6 µs an object), only an escape
can put NUL or a surrogate into a parsed string (raw control characters are invalid JSON, a raw
surrogate invalid UTF-8), so the tree is only walked for its paths when the body holds such an
escape, an overflowing number or a duplicate key; the depth walk visits containers only, a level
at a time.
"""

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError

from .bodies import body_read

_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|d[89a-f][0-9a-f]{2})", re.IGNORECASE)
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTAINERS = (dict, list)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


class _ObjectWithDuplicateKey(dict):
    """A decoded object in which `duplicate_key` appeared more than once."""

    __slots__ = ("duplicate_key",)


def json_loads_checked(text: str, *, max_depth: int, allow_nul: bool = False) -> Any:
    """`json.loads` that raises ValidationError({path: [message]}) for a key repeated in one
    object, a value no column can store (NUL, lone surrogate, non-finite number) or a nesting
    deeper than `max_depth`, and ValueError for text that is not JSON.

    Every JSON request body must pass through it. `allow_nul` lets NUL through for a reader that
    refuses it item by item itself (OTLP spans, as their protobuf encoding may carry NUL too).
    """
    overflowed = duplicated = False

    def parse_float(token: str) -> float:
        nonlocal overflowed
        value = float(token)
        overflowed = overflowed or not math.isfinite(value)
        return value

    def object_from_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal duplicated
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        duplicated = True
        seen: set[str] = set()
        marked = _ObjectWithDuplicateKey(obj)
        marked.duplicate_key = next(key for key, _ in pairs if key in seen or seen.add(key))
        return marked

    try:
        data = json.loads(
            text, parse_float=parse_float, parse_constant=_refuse_constant, object_pairs_hook=object_from_pairs
        )
    except RecursionError:
        raise ValidationError({"non_field_errors": [f"Nested more than {max_depth} levels deep."]}) from None
    suspect_escape = _SUSPECT_ESCAPE.search(text) is not None
    if overflowed or duplicated or suspect_escape or _deeper_than(data, max_depth):
        problem = _first_problem(data, max_depth, allow_nul=allow_nul)
        if problem is not None:
            path, message = problem
            raise ValidationError({path or "non_field_errors": [message]})
    return data


def _deeper_than(data: Any, max_depth: int) -> bool:
    level = [data] if isinstance(data, _CONTAINERS) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, _CONTAINERS)
        ]
    return False


def _string_problem(value: str, allow_nul: bool) -> str | None:
    if "\x00" in value and not allow_nul:
        return "contains a NUL character (\\u0000), which cannot be stored"
    if not value.isascii() and _SURROGATE.search(value):
        return "contains a lone surrogate (\\ud800-\\udfff), which is not a character"
    return None


def _first_problem(data: Any, max_depth: int, *, allow_nul: bool) -> tuple[str, str] | None:
    """The path and message of the first refused value, depth first."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        where = ".".join(path)
        if isinstance(node, str):
            message = _string_problem(node, allow_nul)
            if message:
                return where, f"Text {message}."
        elif isinstance(node, float) and not math.isfinite(node):
            return where, "Number out of range (a JSON number must be finite)."
        elif isinstance(node, _CONTAINERS):
            if len(path) >= max_depth:
                return where, f"Nested more than {max_depth} levels deep."
            if isinstance(node, dict):
                if type(node) is _ObjectWithDuplicateKey:
                    key = node.duplicate_key
                    return ".".join((*path, key)), f"The key {key!r} appears more than once in this object."
                for key in node:
                    message = _string_problem(key, allow_nul)
                    if message:
                        return where, f"A key {message}."
                items = [(value, (*path, key)) for key, value in node.items()]
            else:
                items = [(value, (*path, str(index))) for index, value in enumerate(node)]
            stack.extend(reversed(items))
    return None


def request_text(stream, parser_context: dict[str, Any] | None) -> str:
    """The request's body as text: read (and inflated when `Content-Encoding` says gzip or
    deflate) by the one bounded reader, at most SELFEVAL_MAX_BODY_BYTES once inflated."""
    context = parser_context or {}
    meta = context["request"].META
    body = body_read(
        stream=stream,
        content_length=meta.get("CONTENT_LENGTH"),
        transfer_encoding=meta.get("HTTP_TRANSFER_ENCODING", ""),
        content_encoding=meta.get("HTTP_CONTENT_ENCODING", ""),
        max_bytes=settings.SELFEVAL_MAX_BODY_BYTES,
        limit_name="SELFEVAL_MAX_BODY_BYTES",
    )
    try:
        return body.decode(parsers.get_encoding(context))
    except UnicodeDecodeError as exc:
        raise ParseError(f"JSON parse error - {exc}") from None


class CheckedJSONParser(parsers.BaseParser):
    """`application/json` through the bounded reader and `json_loads_checked` (depth bound:
    SELFEVAL_MAX_JSON_DEPTH). A BaseParser, not DRF's JSONParser: DRF hands that one
    `request.body`, read by Django under its own limit (core/api/bodies.py says why not)."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        text = request_text(stream, parser_context)
        try:
            return json_loads_checked(text, max_depth=settings.SELFEVAL_MAX_JSON_DEPTH)
        except ValueError as exc:  # json.JSONDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None


@dataclass(frozen=True)
class UnreadableLine:
    """An NDJSON line that is not JSON, or holds a value no column can store: the item's error."""

    line: int
    fields: dict[str, list[str]]


class NDJSONParser(parsers.BaseParser):
    """Newline-delimited JSON (`application/x-ndjson`): one JSON value per line, blank lines skipped.

    Each line is parsed on its own, as the JSON parser would parse a whole body; a line that fails
    becomes an `UnreadableLine` in its place, so a batch answers for it and still takes the others.
    """

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None) -> list[Any]:
        items: list[Any] = []
        for number, line in enumerate(request_text(stream, parser_context).split("\n"), start=1):
            if not line.strip():
                continue
            try:
                items.append(json_loads_checked(line, max_depth=settings.SELFEVAL_MAX_JSON_DEPTH))
            except ValidationError as exc:
                items.append(
                    UnreadableLine(number, {key: [str(m) for m in value] for key, value in exc.detail.items()})
                )
            except ValueError as exc:
                items.append(UnreadableLine(number, {"non_field_errors": [f"Line {number}: JSON parse error - {exc}"]}))
        return items
