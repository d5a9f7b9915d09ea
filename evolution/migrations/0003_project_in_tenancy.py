"""Verification logs point at tenancy.Project (the same table as before): state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0002_field_verbose_names"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="verificationlog",
                    name="project",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="tenancy.project",
                        verbose_name="project",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
