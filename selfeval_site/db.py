"""Running a hot statement as a PostgreSQL prepared statement on Django's own connection."""

import time
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection


def fetchone_prepared(sql: str, params: list[Any]) -> tuple[Any, ...] | None:
    """Run `sql` (with %s placeholders) on PostgreSQL as a prepared statement; its first row.

    Django sends every query with client-side binding and never prepares (so that
    transaction-mode poolers keep working); PostgreSQL then parses and plans each one again.
    For the few statements of the hottest endpoints planning costs more than running, so they
    are prepared once per connection, unless SELFEVAL_PREPARED_STATEMENTS is off (behind a
    pooler that cannot keep prepared statements). Errors come out as django.db errors and the
    query is logged like any other (query counts in tests see it). PostgreSQL only.
    """
    with connection.cursor() as django_cursor:  # connects, health check, thread-sharing check
        if not settings.SELFEVAL_PREPARED_STATEMENTS:
            django_cursor.execute(sql, params)
            return django_cursor.fetchone()
        connection.validate_no_broken_transaction()  # what Django's cursor checks before each query
        started = time.monotonic()
        with connection.wrap_database_errors, psycopg.Cursor(django_cursor.cursor.connection) as cursor:
            cursor.execute(sql, params, prepare=True)
            row = cursor.fetchone()
        if connection.queries_logged:
            connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})
        return row
