from django.db import models
from django.utils.translation import gettext_lazy as _


class IdempotencyRecord(models.Model):
    """A client's `Idempotency-Key` on a retry-safe endpoint (POST /api/feedback, /api/sessions,
    /api/sessions/batch) and the answer its request got.

    Written in the transaction of the work itself, so a stored answer always goes with its stored
    writes; the unique (client, key) makes a concurrent duplicate wait for the first request and
    then read its answer. Rows expire after SELFEVAL_IDEMPOTENCY_KEY_TTL seconds.
    """

    client = models.CharField(max_length=200, help_text=_("the API key, staff user or end user that sent the key"))
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text=_("SHA-256 of the request as validated"))
    response_status = models.PositiveSmallIntegerField(null=True)
    # JSON text rather than jsonb, which would reorder the keys: a replay answers the same bytes.
    response_body = models.TextField(blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "feedback_idempotencyrecord"  # created by the feedback app, which had the only use then
        constraints = [
            models.UniqueConstraint(fields=["client", "key"], name="idempotency_key_unique_per_client"),
        ]

    def __str__(self) -> str:
        return f"{self.client} {self.key}"
