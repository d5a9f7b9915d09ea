"""IdempotencyRecord moves from feedback to the API's own app (the same table): state only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("feedback", "0006_idempotency_record"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="IdempotencyRecord",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        (
                            "client",
                            models.CharField(
                                help_text="the API key, staff user or end user that sent the key", max_length=200
                            ),
                        ),
                        ("key", models.CharField(max_length=255)),
                        ("fingerprint", models.CharField(help_text="SHA-256 of the request as validated", max_length=64)),
                        ("response_status", models.PositiveSmallIntegerField(null=True)),
                        ("response_body", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField()),
                        ("expires_at", models.DateTimeField(db_index=True)),
                    ],
                    options={
                        "db_table": "feedback_idempotencyrecord",
                        "constraints": [
                            models.UniqueConstraint(fields=("client", "key"), name="idempotency_key_unique_per_client")
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
