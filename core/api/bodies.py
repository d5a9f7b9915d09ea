"""Reading a request body, bounded: the one reader of every write endpoint, the JSON API's parsers
(core/api/parsers.py) and the OTLP receiver (otlp/codec.py) alike.

A body may be compressed (`Content-Encoding: gzip`, or `deflate`); the size limit applies to the
inflated body, which is inflated in bounded steps, so a small compressed bomb stops one byte past
the limit instead of filling memory. A declared length over the limit is refused before a byte is
read, whatever its size (10^20 included); a body that cannot be read, or ends before its declared
length, and a body that does not inflate are a 400, an unknown coding a 415 naming the accepted ones.

It reads the WSGI stream itself, never `HttpRequest.body`: Django's own reader refuses a body
over DATA_UPLOAD_MAX_MEMORY_SIZE with an HTML 400 and a logged traceback, before this limit and
this error envelope could answer. (DRF reads `request.body` for its own JSONParser and FormParser,
which is why the API's parsers derive from BaseParser.)
"""

import zlib
from typing import IO

from rest_framework import exceptions, status

# zlib window bits: gzip framing, and zlib framing (what HTTP calls "deflate", RFC 9110).
_INFLATE_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
ACCEPTED_CONTENT_ENCODINGS = "gzip, deflate"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


class LengthRequired(exceptions.APIException):
    status_code = status.HTTP_411_LENGTH_REQUIRED
    default_detail = "A Content-Length header is required (chunked request bodies are not read)."
    default_code = "length_required"


class UnsupportedContentEncoding(exceptions.UnsupportedMediaType):
    """415 with the codings we do accept, as RFC 9110 asks (`Accept-Encoding` on the answer)."""


def body_read(
    *,
    stream: IO[bytes] | None,
    content_length: str | None,
    transfer_encoding: str,
    content_encoding: str,
    max_bytes: int,
    limit_name: str,
) -> bytes:
    """The request body, inflated, at most `max_bytes` long (else 413 naming the `limit_name`
    setting); 400 when it does not inflate, 415 for a coding other than gzip or deflate."""
    coding = content_encoding.strip().lower()
    if coding not in ("", "identity") and coding not in _INFLATE_WBITS:
        raise UnsupportedContentEncoding(
            coding, detail=f"Unsupported Content-Encoding {coding!r}: send gzip, deflate or an uncompressed body."
        )
    if not content_length:
        if transfer_encoding:
            raise LengthRequired()
        return b""
    try:
        length = int(content_length)
    except ValueError:
        length = -1
    if length < 0:
        raise exceptions.ParseError("Content-Length is not a number of bytes.")
    if length > max_bytes:
        raise _too_large(f"Request body of {length} bytes", max_bytes, limit_name)
    raw = _read(stream, length) if stream is not None and length > 0 else b""
    if coding in ("", "identity"):
        return raw
    return _inflate(raw, _INFLATE_WBITS[coding], max_bytes, limit_name)


def _read(stream: IO[bytes], length: int) -> bytes:
    try:
        raw = stream.read(length)
    except OSError:  # the client went away mid-body (Django's UnreadablePostError is one)
        raise exceptions.ParseError("The request body could not be read (the connection broke).") from None
    if len(raw) < length:
        raise exceptions.ParseError(
            f"The request body ended after {len(raw)} of the {length} bytes of its Content-Length."
        )
    return raw


def _inflate(raw: bytes, wbits: int, max_bytes: int, limit_name: str) -> bytes:
    inflated = bytearray()
    pending = raw
    while pending:  # gzip allows several members one after the other
        decompressor = zlib.decompressobj(wbits)
        try:
            while pending and not decompressor.eof:
                # max_length bounds each step's output: a bomb stops one byte past the limit.
                inflated += decompressor.decompress(pending, max_bytes + 1 - len(inflated))
                if len(inflated) > max_bytes:
                    raise _too_large("Inflated request body", max_bytes, limit_name)
                pending = decompressor.unconsumed_tail
        except zlib.error as error:
            raise exceptions.ParseError(f"The compressed body does not inflate: {error}") from None
        if not decompressor.eof:
            raise exceptions.ParseError("The compressed body is truncated.")
        pending = decompressor.unused_data
    return bytes(inflated)


def _too_large(what: str, max_bytes: int, limit_name: str) -> PayloadTooLarge:
    return PayloadTooLarge(f"{what} exceeds the limit of {max_bytes} bytes ({limit_name}).")
