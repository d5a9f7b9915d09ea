"""Project and ProjectAPIKey move here from the diagnosis app: the tables stay as they are."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("diagnosis", "0003_field_verbose_names"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Project",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("slug", models.SlugField(max_length=64, unique=True, verbose_name="slug")),
                        ("name", models.CharField(max_length=200, verbose_name="name")),
                        ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="created at")),
                    ],
                    options={
                        "verbose_name": "project",
                        "verbose_name_plural": "projects",
                        "db_table": "diagnosis_project",
                        "ordering": ["slug"],
                    },
                ),
                migrations.CreateModel(
                    name="ProjectAPIKey",
                    fields=[
                        ("id", models.CharField(editable=False, max_length=150, primary_key=True, serialize=False, unique=True)),
                        ("prefix", models.CharField(editable=False, max_length=8, unique=True)),
                        ("hashed_key", models.CharField(editable=False, max_length=150)),
                        ("created", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "name",
                            models.CharField(
                                default=None,
                                help_text="A free-form name for the API key. Need not be unique. 50 characters max.",
                                max_length=50,
                            ),
                        ),
                        (
                            "revoked",
                            models.BooleanField(
                                blank=True,
                                default=False,
                                help_text="If the API key is revoked, clients cannot use it anymore. (This cannot be undone.)",
                            ),
                        ),
                        (
                            "expiry_date",
                            models.DateTimeField(
                                blank=True,
                                help_text="Once API key expires, clients cannot use it anymore.",
                                null=True,
                                verbose_name="Expires",
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="api_keys", to="tenancy.project"
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "project API key",
                        "verbose_name_plural": "project API keys",
                        "db_table": "diagnosis_projectapikey",
                        "ordering": ("-created",),
                        "abstract": False,
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
