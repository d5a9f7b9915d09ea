"""OTLP/HTTP on the wire: content types, bounded reading and inflating, decoding, encoding answers.

Both encodings of the OTLP specification: binary protobuf (`application/x-protobuf`) and OTLP's
JSON mapping (`application/json`: proto3 JSON, except that trace and span ids are hex strings).
A body may be gzip- or deflate-compressed (`Content-Encoding`): it is read and inflated, bounded,
by the API's one body reader (`core/api/bodies.py`).
Every answer, errors included, is encoded as the request was (a google.rpc.Status for errors); a
request whose Content-Type is neither is answered as its `Accept` asks, JSON by default.

A body that is not an export request is a 400 that says what is wrong in the request, by its
place in the body (`resourceSpans.0.scopeSpans.0.spans.0.kind: expected one of SPAN_KIND_...`),
never by the parser's internals (protobuf type names, Python's recursion limit): OTLP/JSON goes
through the API's one JSON decoder (duplicate keys, nesting, lone surrogates, as every JSON body)
and then the protobuf JSON mapping, whose refusal is located field by field.
"""

import base64
import json
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.utils.http import parse_header_parameters
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from rest_framework import exceptions

from core.api.parsers import json_loads_checked


class Encoding(StrEnum):
    PROTOBUF = "application/x-protobuf"
    JSON = "application/json"


_MEDIA_TYPES = {
    "application/x-protobuf": Encoding.PROTOBUF,
    "application/protobuf": Encoding.PROTOBUF,
    "application/json": Encoding.JSON,
}


def encoding_of(content_type: str) -> Encoding | None:
    media_type, _ = parse_header_parameters(content_type or "")
    return _MEDIA_TYPES.get(media_type)


def answer_encoding(content_type: str, accept: str) -> Encoding:
    """The encoding of every answer: the request's, else the first of ours its Accept names, else JSON."""
    encoding = encoding_of(content_type)
    if encoding is not None:
        return encoding
    for media_range in (accept or "").split(","):
        encoding = encoding_of(media_range.strip())
        if encoding is not None:
            return encoding
    return Encoding.JSON


def request_encoding(content_type: str) -> Encoding:
    encoding = encoding_of(content_type)
    if encoding is None:
        raise exceptions.UnsupportedMediaType(
            content_type or "(none)",
            detail=f"Unsupported Content-Type {content_type or '(none)'!r}: send application/x-protobuf or application/json.",
        )
    return encoding


def request_decode(body: bytes, encoding: Encoding) -> ExportTraceServiceRequest:
    """The ExportTraceServiceRequest in `body`; 400 naming the problem when it is not one."""
    message = ExportTraceServiceRequest()
    if encoding is Encoding.PROTOBUF:
        try:
            message.ParseFromString(body)
        except DecodeError:
            hint = " It looks like JSON: send it as application/json." if body.lstrip()[:1] in (b"{", b"[") else ""
            raise exceptions.ParseError(
                f"The body is not a protobuf OTLP trace export: its wire format is corrupt or truncated.{hint}"
            ) from None
        return message
    try:
        data = json_loads_checked(body.decode(), max_depth=settings.SELFEVAL_MAX_JSON_DEPTH, allow_nul=True)
    except UnicodeDecodeError as error:
        raise _not_otlp_json(f"it is not UTF-8 text (byte {error.start})") from None
    except exceptions.ValidationError as error:
        (where, messages), *_ = error.detail.items()
        raise _not_otlp_json(f"{where}: {messages[0]}" if where != "non_field_errors" else str(messages[0])) from None
    except ValueError as error:  # json.JSONDecodeError: the position of the syntax error
        raise _not_otlp_json(f"it is not JSON ({error})") from None
    if not isinstance(data, dict):
        raise _not_otlp_json("the body must be a JSON object")
    try:
        _hex_ids_to_base64(data)
    except ValueError as error:
        raise _not_otlp_json(str(error)) from None
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except (ValueError, TypeError, json_format.ParseError) as error:
        where, expected = _first_misfit(data, ExportTraceServiceRequest(), ()) or ("", str(error))
        raise _not_otlp_json(f"{where}: {expected}" if where else expected) from None
    return message


def _not_otlp_json(problem: str) -> exceptions.ParseError:
    return exceptions.ParseError(f"The body is not an OTLP/JSON trace export: {problem.rstrip('.')}.")


def _first_misfit(data: Any, message: Message, path: tuple[str, ...]) -> tuple[str, str] | None:
    """Where `data` does not fit `message`, and what that field expects. Only runs once the
    protobuf JSON mapping refused the body: each field is parsed alone, and a message field that
    fails is searched in turn, down to the scalar, the list or the oneof at fault."""
    where = ".".join(path)
    if not isinstance(data, dict):
        return where, "expected an object"
    fields = {name: field for field in message.DESCRIPTOR.fields for name in (field.name, field.json_name)}
    for key, value in data.items():
        field = fields.get(key)
        if field is None or value is None or _fits(message, {key: value}):
            continue
        here = (*path, key)
        if field.is_repeated and not isinstance(value, list):
            return ".".join(here), "expected an array"
        if field.cpp_type != FieldDescriptor.CPPTYPE_MESSAGE:
            return ".".join(here), _expected(field)
        container = getattr(message, field.name)
        if not field.is_repeated:
            return _first_misfit(value, container, here)
        for index, item in enumerate(value):
            if not _fits(message, {key: [item]}):
                return _first_misfit(item, container.add(), (*here, str(index)))
    for oneof in message.DESCRIPTOR.oneofs:
        chosen = [key for key, value in data.items() if fields.get(key) in oneof.fields and value is not None]
        if len(chosen) > 1:
            return where, f"sets {' and '.join(chosen)}, of which one only may be set"
    return None


def _fits(message: Message, data: dict[str, Any]) -> bool:
    try:
        json_format.ParseDict(data, type(message)(), ignore_unknown_fields=True)
    except (ValueError, TypeError, json_format.ParseError):
        return False
    return True


_EXPECTED = {
    FieldDescriptor.CPPTYPE_STRING: "expected a string",
    FieldDescriptor.CPPTYPE_BOOL: "expected true or false",
    FieldDescriptor.CPPTYPE_INT32: "expected an integer (a number, or a string of digits)",
    FieldDescriptor.CPPTYPE_INT64: "expected an integer (a number, or a string of digits)",
    FieldDescriptor.CPPTYPE_UINT32: "expected a non-negative integer (a number, or a string of digits)",
    FieldDescriptor.CPPTYPE_UINT64: "expected a non-negative integer (a number, or a string of digits)",
    FieldDescriptor.CPPTYPE_DOUBLE: "expected a number",
    FieldDescriptor.CPPTYPE_FLOAT: "expected a number",
}


def _expected(field: FieldDescriptor) -> str:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return "expected base64 text"
    if field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
        names = ", ".join(value.name for value in field.enum_type.values)
        return f"expected one of {names}, or its number"
    return _EXPECTED[field.cpp_type]


_SPAN_IDS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")
_LINK_IDS = ("traceId", "trace_id", "spanId", "span_id")


def _hex_ids_to_base64(data: dict[str, Any]) -> None:
    """OTLP/JSON writes trace and span ids in hex where proto3 JSON expects base64: translate them
    in place (a hex id read as base64 would silently decode to other bytes)."""
    _translate_ids(data, lambda value: base64.b64encode(bytes.fromhex(value)).decode("ascii"))


def _base64_ids_to_hex(data: dict[str, Any]) -> None:
    _translate_ids(data, lambda value: base64.b64decode(value).hex())


def _translate_ids(data: dict[str, Any], translate) -> None:
    for resource_path, resource_spans in _items(data, "", "resourceSpans", "resource_spans"):
        for scope_path, scope_spans in _items(resource_spans, resource_path, "scopeSpans", "scope_spans"):
            for span_path, span in _items(scope_spans, scope_path, "spans"):
                _translate(span, span_path, _SPAN_IDS, translate)
                for link_path, link in _items(span, span_path, "links"):
                    _translate(link, link_path, _LINK_IDS, translate)


def _items(parent: Any, path: str, *keys: str) -> list[tuple[str, dict[str, Any]]]:
    """The objects listed under the first of `keys` that `parent` has, each with its path."""
    if not isinstance(parent, dict):
        return []
    for key in keys:
        value = parent.get(key)
        if isinstance(value, list):
            prefix = f"{path}.{key}" if path else key
            return [(f"{prefix}.{index}", item) for index, item in enumerate(value) if isinstance(item, dict)]
    return []


def _translate(item: dict[str, Any], path: str, keys: tuple[str, ...], translate) -> None:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str):
            try:
                item[key] = translate(value)
            except ValueError:
                raise ValueError(f"{path}.{key}: {value[:40]!r} is not a hex string") from None


def message_encode(message: Message, encoding: Encoding) -> bytes:
    """Binary protobuf, or OTLP/JSON (proto3 JSON with hex trace and span ids)."""
    if encoding is Encoding.PROTOBUF:
        return message.SerializeToString()
    data = json_format.MessageToDict(message)
    _base64_ids_to_hex(data)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


# google.rpc.Code of each error status, for the Status body (OTLP clients log it, never act on it).
_RPC_CODES = {
    400: code_pb2.INVALID_ARGUMENT,
    401: code_pb2.UNAUTHENTICATED,
    403: code_pb2.PERMISSION_DENIED,
    404: code_pb2.NOT_FOUND,
    405: code_pb2.UNIMPLEMENTED,
    411: code_pb2.INVALID_ARGUMENT,
    413: code_pb2.INVALID_ARGUMENT,
    415: code_pb2.UNIMPLEMENTED,
    429: code_pb2.RESOURCE_EXHAUSTED,
    503: code_pb2.UNAVAILABLE,
}


def status_encode(status_code: int, message: str, encoding: Encoding) -> bytes:
    rpc_status = status_pb2.Status(code=_RPC_CODES.get(status_code, code_pb2.UNKNOWN), message=message)
    return message_encode(rpc_status, encoding)
