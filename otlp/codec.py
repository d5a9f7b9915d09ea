"""OTLP/HTTP on the wire: content types, bounded reading and inflating, decoding, encoding answers.

Both encodings of the OTLP specification: binary protobuf (`application/x-protobuf`) and OTLP's
JSON mapping (`application/json`: proto3 JSON, except that trace and span ids are hex strings).
A body may be gzip- or deflate-compressed (`Content-Encoding`): it is read and inflated, bounded,
by the API's one body reader (`core/api/bodies.py`).
Every answer, errors included, is encoded as the request was (a google.rpc.Status for errors).
"""

import base64
import json
from enum import StrEnum
from typing import Any

from django.utils.http import parse_header_parameters
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from rest_framework import exceptions


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
        except DecodeError as error:
            raise exceptions.ParseError(f"The body is not a protobuf ExportTraceServiceRequest: {error}") from None
        return message
    try:
        data = json.loads(body)
        _hex_ids_to_base64(data)
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except (ValueError, TypeError, RecursionError, json_format.ParseError) as error:
        raise exceptions.ParseError(f"The body is not an OTLP/JSON ExportTraceServiceRequest: {error}") from None
    return message


_SPAN_IDS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")
_LINK_IDS = ("traceId", "trace_id", "spanId", "span_id")


def _hex_ids_to_base64(data: Any) -> None:
    """OTLP/JSON writes trace and span ids in hex where proto3 JSON expects base64: translate them
    in place (a hex id read as base64 would silently decode to other bytes)."""
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    _translate_ids(data, lambda value: base64.b64encode(bytes.fromhex(value)).decode("ascii"))


def _base64_ids_to_hex(data: dict[str, Any]) -> None:
    _translate_ids(data, lambda value: base64.b64decode(value).hex())


def _translate_ids(data: dict[str, Any], translate) -> None:
    for resource_spans in _items(data, "resourceSpans", "resource_spans"):
        for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
            for span in _items(scope_spans, "spans"):
                _translate(span, _SPAN_IDS, translate)
                for link in _items(span, "links"):
                    _translate(link, _LINK_IDS, translate)


def _items(parent: Any, *keys: str) -> list[Any]:
    if not isinstance(parent, dict):
        return []
    for key in keys:
        value = parent.get(key)
        if isinstance(value, list):
            return [item for item in value if isinstance(item, dict)]
    return []


def _translate(item: dict[str, Any], keys: tuple[str, ...], translate) -> None:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str):
            try:
                item[key] = translate(value)
            except ValueError:
                raise ValueError(f"{key} {value[:40]!r} is not a hex string") from None


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
