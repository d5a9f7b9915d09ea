"""Room on each page of the session table for a new version of a row (PostgreSQL's fillfactor).

A vote moves its session's trace version (an UPDATE of one unindexed column). With full pages the
new row version lands on another page and every index of the table gets an entry (the trigram
indexes of the search included): the database then spends twice the work of the vote itself. With
free room on the page the update stays heap-only (HOT) and touches no index. SQLite has no such knob.
"""

from django.db import migrations


def fillfactor(percent: int):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"ALTER TABLE diagnosis_diagnosissession SET (fillfactor = {percent})")

    return apply


class Migration(migrations.Migration):
    dependencies = [("diagnosis", "0016_session_trace_version")]

    operations = [migrations.RunPython(fillfactor(70), fillfactor(100))]
