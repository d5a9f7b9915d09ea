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
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")
_SF_STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')


def idempotency_key(request: Request) -> str:
    """The request's key, "" without the header; a 400 (ValidationError) for a malformed one."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return ""
    value = raw.strip()
    if value.startswith('"'):
        quoted = _SF_STRING.fullmatch(value)
        if quoted is None:
            _refuse("a quoted key must be a valid Structured Field string")
        value = re.sub(r"\\(.)", r"\1", quoted.group(1))
    if not value:
        _refuse("must not be empty")
    if len(value) > MAX_KEY_LENGTH:
        _refuse(f"at most {MAX_KEY_LENGTH} characters")
    if not _PRINTABLE_ASCII.fullmatch(value):
        _refuse("printable ASCII characters only")
    return value


def _refuse(reason: str) -> NoReturn:
    raise exceptions.ValidationError({HEADER: [f"Invalid header: {reason}."]})


# The header as an OpenAPI parameter, for the endpoints that honour it.
IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    name=HEADER,
    type=str,
    location=OpenApiParameter.HEADER,
    required=False,
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
