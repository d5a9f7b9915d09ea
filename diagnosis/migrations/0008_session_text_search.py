"""Trigram indexes for the session list's text search on the query and the answer (PostgreSQL only).

The admin searches with `icontains`, which PostgreSQL runs as `UPPER(col::text) LIKE UPPER('%term%')`:
a pg_trgm GIN index on `UPPER(col)` serves that for any term of three characters or more, Chinese
included (the databases are UTF-8; trigrams are taken per character). Shorter terms ("证书") have no
trigram; the search is bounded by the list's date range for them (`backoffice.admin`).

The indexes live here, not in Meta.indexes: SQLite has neither GIN nor pg_trgm, and its search is a
plain scan of the (small) development table, so the migration does nothing there. Built
CONCURRENTLY (hence a non-atomic migration) so a large production table stays writable meanwhile.
"""

from django.db import migrations

INDEXES = {
    "session_query_trgm": "query",
    "session_answer_trgm": "answer",
}


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, column in INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON diagnosis_diagnosissession "
            f"USING gin (UPPER({column}) gin_trgm_ops)"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("diagnosis", "0007_session_days")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
