"""The `Idempotency-Key` request header (IETF draft "The Idempotency-Key HTTP Header Field"):
reading it, and claiming the key, doing the work and storing the answer in one transaction.

The draft makes the value a Structured Field string (`Idempotency-Key: "8e03978e-40d5"`); a bare
value (`Idempotency-Key: 8e03978e-40d5`), as many clients send it, is accepted too. Either way the
key is 1 to MAX_KEY_LENGTH printable ASCII characters.

The same key with the same request gets the first answer again and changes nothing; the same key
with another request is a 422. The record is claimed (inserted) before the work in the work's own
transaction: a concurrent duplicate's insert waits on the unique index until the first request
commits, then reads its answer; if the first request failed and rolled back, the duplicate's
insert goes through and it does the work itself. Only successful answers are therefore ever
stored. An expired record is taken over by the next request with its key;
`purge_idempotency_keys` deletes the expired ones.
"""

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NoReturn

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, status
from rest_framework.request import Request

from core.api.errors import ApplicationError
from core.api.models import IdempotencyRecord
from core.tenancy.models import ProjectAPIKey

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


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    status: int
    body: dict[str, Any]


def request_fingerprint(*parts: Any) -> str:
    """SHA-256 of the request's meaning (endpoint and validated fields), not of its bytes: objects
    count whatever the order of their keys."""
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def idempotency_claim(*, client: str, key: str, fingerprint: str) -> IdempotencyRecord | StoredAnswer:
    """Claim `key` for this request, or return the answer stored for the same request.

    Call inside the transaction that does the work, before doing it, and finish a claimed record
    with `idempotency_answer_store` in the same transaction. Raises ApplicationError (422) when
    the key was used with another request.
    """
    if not client:
        raise ValueError("an idempotency key needs a client identity")
    now = timezone.now()
    expires_at = now + timedelta(seconds=settings.SELFEVAL_IDEMPOTENCY_KEY_TTL)
    for _ in range(2):
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(
                    client=client, key=key, fingerprint=fingerprint, created_at=now, expires_at=expires_at
                )
        except IntegrityError:
            pass  # the key is taken (the first request has committed): read what it stored
        existing = IdempotencyRecord.objects.select_for_update().filter(client=client, key=key).first()
        if existing is None:
            continue  # purged between our insert and our read: claim it again
        if existing.expires_at <= now:
            return _take_over(existing, fingerprint=fingerprint, now=now, expires_at=expires_at)
        if existing.fingerprint != fingerprint:
            raise ApplicationError(
                f"Idempotency-Key {key!r} was already used with another request; send a new key for a new request.",
                code="idempotency_key_reused",
                status_code=status.HTTP_422_UNPROCESSABLE_ENTITY,
            )
        return StoredAnswer(status=existing.response_status, body=json.loads(existing.response_body))
    raise RuntimeError(f"Idempotency-Key {key!r} could not be claimed: purged twice while claiming it")


def _take_over(
    record: IdempotencyRecord, *, fingerprint: str, now: datetime, expires_at: datetime
) -> IdempotencyRecord:
    record.fingerprint, record.created_at, record.expires_at = fingerprint, now, expires_at
    record.response_status, record.response_body = None, ""
    record.save(update_fields=["fingerprint", "created_at", "expires_at", "response_status", "response_body"])
    return record


def idempotency_answer_store(*, record: IdempotencyRecord, answer: StoredAnswer) -> None:
    """Store the answer of a claimed record (in the transaction that claimed it)."""
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        response_status=answer.status, response_body=json.dumps(answer.body, ensure_ascii=False)
    )


def idempotency_records_purge(*, now: datetime | None = None) -> int:
    """Delete the expired records; returns how many."""
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def api_key_client(api_key: ProjectAPIKey) -> str:
    """The client an API key's idempotency keys belong to."""
    return f"key:{api_key.pk}"


def idempotent_answer(*, client: str, key: str, fingerprint: str, work: Callable[[], StoredAnswer]) -> StoredAnswer:
    """`work()`'s answer, done at most once per (client, key): in one transaction, claim the key,
    do the work and store its answer; a replay returns the stored answer and does nothing. Without
    a key, `work()` runs as it is. ApplicationError (422) when the key was used with another request."""
    if not key:
        return work()
    with transaction.atomic():
        claimed = idempotency_claim(client=client, key=key, fingerprint=fingerprint)
        if isinstance(claimed, StoredAnswer):
            return claimed
        answer = work()
        idempotency_answer_store(record=claimed, answer=answer)
        return answer
