"""SessionDay and SessionDayChange now live in the reporting app; their tables and rows stay.

State only, but for the content types: renaming them keeps any permission on them attached.
"""

from django.db import migrations

MOVED = ("sessionday", "sessiondaychange")


def content_types_to_reporting(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="diagnosis", model__in=MOVED).update(app_label="reporting")


def content_types_to_diagnosis(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="reporting", model__in=MOVED).update(app_label="diagnosis")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("diagnosis", "0014_session_search_grams"),
        ("reporting", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="SessionDayChange"),
                migrations.DeleteModel(name="SessionDay"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_reporting, content_types_to_diagnosis),
    ]
