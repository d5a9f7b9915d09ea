"""IdempotencyRecord now belongs to core.api (the same table, kept): state only."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0006_idempotency_record"),
        ("api", "0001_idempotency_record_from_feedback"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="IdempotencyRecord")],
            database_operations=[],
        ),
    ]
