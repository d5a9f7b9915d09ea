"""Cases and bad cases point at tenancy.Project (the same table as before): state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("cases", "0003_field_verbose_names"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="badcase",
                    name="project",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="bad_cases",
                        to="tenancy.project",
                        verbose_name="project",
                    ),
                ),
                migrations.AlterField(
                    model_name="case",
                    name="project",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="cases",
                        to="tenancy.project",
                        verbose_name="project",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
