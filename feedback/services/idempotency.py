"""Idempotency keys of POST /api/feedback: claim the key, do the work, store the answer, one transaction.

IETF draft "The Idempotency-Key HTTP Header Field": the same key with the same request gets the
first answer again and changes nothing; the same key with another request is a 422. The record is
claimed (inserted) before the vote in the vote's own transaction: a concurrent duplicate's insert
waits on the unique index until the first request commits, then reads its answer; if the first
request failed and rolled back, the duplicate's insert goes through and it does the work itself.
Only successful answers are therefore ever stored. An expired record is taken over by the next
request with its key; `purge_idempotency_keys` deletes the expired ones.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import status

from core.api.errors import ApplicationError
from feedback.models import IdempotencyRecord


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    status: int
    body: dict[str, Any]


def request_fingerprint(*parts: Any) -> str:
    """SHA-256 of the request's meaning (endpoint and validated fields), not of its bytes."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


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
