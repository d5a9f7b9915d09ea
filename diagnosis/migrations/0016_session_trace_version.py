"""`DiagnosisSession.trace_version`: what the trace API keys its cached body and its ETag by.

A constant default: PostgreSQL adds the column without rewriting the table.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0015_session_days_in_reporting"),
    ]

    operations = [
        migrations.AddField(
            model_name="diagnosissession",
            name="trace_version",
            field=models.PositiveIntegerField(default=1, editable=False),
        ),
    ]
