"""`manage.py purge_idempotency_keys`: delete the expired Idempotency-Key records (feedback and ingestion)."""

from django.core.management.base import BaseCommand

from core.api.idempotency import idempotency_records_purge


class Command(BaseCommand):
    help = (
        "Delete the idempotency records older than SELFEVAL_IDEMPOTENCY_KEY_TTL (run it daily from cron). "
        "Expired records are already ignored; this only keeps the table small."
    )

    def handle(self, *args, **options) -> None:
        deleted = idempotency_records_purge()
        self.stdout.write(f"{deleted} expired idempotency record(s) deleted")
