"""The day rollups store their cube as a fixed-order list and no longer count "needs review"
(the dashboard shows the triage queue's count).

Rows written in 0007's layout (a dict cube) are derived data: they are deleted here, and
`manage.py rollups_rebuild` recomputes them (README, production deployment).
"""

from django.db import migrations, models


def drop_old_rows(apps, schema_editor):
    apps.get_model("diagnosis", "SessionDay").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0009_machine_text_codes"),
    ]

    operations = [
        migrations.RunPython(drop_old_rows, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="sessionday",
            name="needs_review",
        ),
        migrations.AlterField(
            model_name="sessionday",
            name="cube",
            field=models.JSONField(default=list),
        ),
    ]
