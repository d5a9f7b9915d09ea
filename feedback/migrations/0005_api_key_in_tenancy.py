"""Feedback events point at tenancy.ProjectAPIKey (the same table as before): state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0004_event_indexes_for_writes"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="feedbackevent",
                    name="api_key",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="tenancy.projectapikey",
                        verbose_name="API key",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
