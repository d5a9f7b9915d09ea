"""The `Idempotency-Key` request header (IETF draft "The Idempotency-Key HTTP Header Field").

The draft makes the value a Structured Field string (`Idempotency-Key: "8e03978e-40d5"`); a bare
value (`Idempotency-Key: 8e03978e-40d5`), as many clients send it, is accepted too. Either way the
key is 1 to MAX_KEY_LENGTH printable ASCII characters.
"""

import re
from typing import NoReturn

from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions
from rest_framework.request import Request

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
_SF_STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')
# What a key is, for `idempotency_key` and the schema alike: around optional whitespace, a bare key
# (printable ASCII, not starting with a quote, no whitespace at its ends) or a Structured Field string.
_BARE_KEY = rf"[\x21\x23-\x7e](?:[\x20-\x7e]{{0,{MAX_KEY_LENGTH - 2}}}[\x21-\x7e])?"
_QUOTED_KEY = rf'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\]){{1,{MAX_KEY_LENGTH}}}"'
KEY_PATTERN = rf"^[ \t]*(?:{_BARE_KEY}|{_QUOTED_KEY})[ \t]*$"
_KEY = re.compile(KEY_PATTERN)


def idempotency_key(request: Request) -> str:
    """The request's key, "" without the header; a 400 (ValidationError) for a malformed one. The
    rule is KEY_PATTERN, the one the schema publishes; `_reason` only says why a value breaks it."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return ""
    if not _KEY.fullmatch(raw):
        _refuse(_reason(raw.strip(" \t")))
    value = raw.strip(" \t")
    return _unescape(value[1:-1]) if value.startswith('"') else value


def _unescape(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted)


def _reason(value: str) -> str:
    if value.startswith('"'):
        quoted = _SF_STRING.fullmatch(value)
        if quoted is None:
            return "a quoted key must be a valid Structured Field string"
        value = _unescape(quoted.group(1))
    if not value:
        return "must not be empty"
    if len(value) > MAX_KEY_LENGTH:
        return f"at most {MAX_KEY_LENGTH} characters"
    return "printable ASCII characters only"


def _refuse(reason: str) -> NoReturn:
    raise exceptions.ValidationError({HEADER: [f"Invalid header: {reason}."]})


# The header as an OpenAPI parameter, for the endpoints that honour it.
IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    name=HEADER,
    type=str,
    location=OpenApiParameter.HEADER,
    required=False,
    pattern=KEY_PATTERN,
    description=(
        f"Makes a retry safe (IETF draft semantics). A unique value per request, 1 to {MAX_KEY_LENGTH} printable "
        "ASCII characters (a UUID, say), quoted as a Structured Field string or bare. The same key with the same "
        "body answers the stored response again (same status and body) and writes nothing; the same key with "
        "another body is a 422; a concurrent duplicate waits for the first request and gets its answer. Keys "
        "are per client (API key, staff user or end user) and kept 24 hours by default "
        "(SELFEVAL_IDEMPOTENCY_KEY_TTL, seconds). Only successful answers are stored: a request that failed may "
        "be retried with the same key."
    ),
)
