"""SessionDay and SessionDayChange move here from the diagnosis app: state only, the tables
(`diagnosis_sessionday`, `diagnosis_sessiondaychange`), their rows, indexes and constraint stay."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("diagnosis", "0011_session_day_changes"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SessionDay",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("day", models.DateField(verbose_name="day")),
                        ("sessions", models.PositiveIntegerField(default=0)),
                        ("reviewed", models.PositiveIntegerField(default=0)),
                        ("score_missing", models.PositiveIntegerField(default=0)),
                        ("score_buckets", models.JSONField(default=list)),
                        ("cube", models.JSONField(default=list)),
                        ("aiops_failures", models.JSONField(default=dict)),
                        ("verifier_right", models.PositiveIntegerField(default=0)),
                        ("verifier_wrong", models.PositiveIntegerField(default=0)),
                        ("reviews", models.PositiveIntegerField(default=0)),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="tenancy.project",
                                verbose_name="project",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "day of sessions",
                        "verbose_name_plural": "days of sessions",
                        "db_table": "diagnosis_sessionday",
                        "indexes": [models.Index(fields=["day"], name="session_day_day")],
                        "constraints": [models.UniqueConstraint(fields=("project", "day"), name="session_day_unique")],
                    },
                ),
                migrations.CreateModel(
                    name="SessionDayChange",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("day", models.DateField()),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.project"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "diagnosis_sessiondaychange",
                        "indexes": [models.Index(fields=["day"], name="session_day_change_day")],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
