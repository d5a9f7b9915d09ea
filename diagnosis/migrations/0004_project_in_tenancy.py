"""Project and ProjectAPIKey now live in the tenancy app; their tables, rows and permissions stay.

State only, but for the content types: renaming them keeps every permission (and the roles holding
them) attached.
"""

import django.db.models.deletion
from django.db import migrations, models

MOVED = ("project", "projectapikey")


def content_types_to_tenancy(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="diagnosis", model__in=MOVED).update(app_label="tenancy")


def content_types_to_diagnosis(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="tenancy", model__in=MOVED).update(app_label="diagnosis")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("diagnosis", "0003_field_verbose_names"),
        ("tenancy", "0001_initial"),
        ("cases", "0004_project_in_tenancy"),
        ("feedback", "0005_api_key_in_tenancy"),
        ("evolution", "0003_project_in_tenancy"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="diagnosissession",
                    name="project",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="sessions",
                        to="tenancy.project",
                        verbose_name="project",
                    ),
                ),
                migrations.DeleteModel(name="ProjectAPIKey"),
                migrations.DeleteModel(name="Project"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_tenancy, content_types_to_diagnosis),
    ]
