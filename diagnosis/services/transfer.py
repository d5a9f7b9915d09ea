"""Sessions in and out as JSON Lines, one ingestion payload per line (`export_sessions`, `import_sessions`).

Export streams: sessions are read `chunk_size` at a time from one cursor, each chunk's steps,
invocations and refs in three more queries, so memory and the statements per chunk stay the
same for any number of sessions. Import validates each line with `session_ingest_from_body` and
stores it with `session_upsert`, as `POST /api/sessions` does (create or replace, evaluation
enqueued after commit), a batch of lines per transaction and a savepoint per session: a line
that fails is reported with its number and skipped, and never leaves part of its session behind.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import batched
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError

from core.api.errors import flatten_field_errors
from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession
from diagnosis.serializers import SessionIngest, session_ingest_from_body
from diagnosis.services.export import PAYLOAD_FIELDS, payload_prefetches, session_payload
from diagnosis.services.ingestion import session_upsert

EXPORT_CHUNK_SIZE = 500
# Characters JSON leaves unescaped that some line readers take for a line break (str.splitlines does).
_LINE_BREAKS = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\x85", "\\u0085"))
IMPORT_BATCH_SIZE = 100


def session_export_lines(*, sessions: QuerySet[DiagnosisSession], chunk_size: int = EXPORT_CHUNK_SIZE) -> Iterator[str]:
    """One JSON line (`json_line`) per session, in the queryset's order, streamed."""
    rows = sessions.only(*PAYLOAD_FIELDS).prefetch_related(*payload_prefetches())
    for session in rows.iterator(chunk_size=chunk_size):
        yield json_line(session_payload(session=session))


def json_line(value: Any) -> str:
    """`value` as one compact JSON line (without its newline), keys in the order given.

    UTF-8 text as is, except the characters some readers split lines on, which stay escaped.
    """
    line = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in _LINE_BREAKS:
        if char in line:  # rare: replace() copies the line
            line = line.replace(char, escaped)
    return line


@dataclass(frozen=True, slots=True)
class LineOutcome:
    """What became of one input line: `created` True / False (replaced), or an `error`."""

    line: int
    session_id: str = ""
    created: bool | None = None
    error: str = ""


def session_import_lines(
    *, project: Project, lines: Iterable[bytes], batch_size: int = IMPORT_BATCH_SIZE
) -> Iterator[LineOutcome]:
    """Store each line's payload in `project`; yields one outcome per line once its batch committed.

    Blank lines are skipped silently. A line that is not UTF-8, not a JSON object, not a valid
    payload, or that the database refuses, yields an error and stores nothing; the other lines
    of its batch are stored all the same.
    """
    for batch in batched(enumerate(lines, start=1), batch_size, strict=False):
        outcomes: list[LineOutcome] = []
        valid: list[tuple[int, SessionIngest]] = []
        for number, raw in batch:
            if not raw.strip():
                continue
            data, error = _validated(raw)
            if error:
                outcomes.append(LineOutcome(line=number, error=error))
            else:
                valid.append((number, data))
        with transaction.atomic():
            for number, data in valid:
                try:
                    # The file is an operator's export: its layers are SelfEval's own, verdicts included.
                    result = session_upsert(project=project, data=data, trusted_layers=True)
                except DatabaseError as exc:  # rolled back to the session's own savepoint
                    outcomes.append(LineOutcome(line=number, session_id=data.session_id, error=_one_line(exc)))
                else:
                    outcomes.append(LineOutcome(line=number, session_id=data.session_id, created=result.created))
        yield from sorted(outcomes, key=lambda outcome: outcome.line)


def _validated(raw: bytes) -> tuple[SessionIngest | None, str]:
    """(validated payload, "") or (None, what is wrong with the line)."""
    try:
        payload = json.loads(raw.decode("utf-8").rstrip("\r\n"))
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason} at byte {exc.start})"
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg} at column {exc.colno}"
    if not isinstance(payload, dict):
        return None, "not a JSON object"
    try:
        return session_ingest_from_body(payload), ""
    except ValidationError as error:
        fields = flatten_field_errors(error.detail)
        return None, "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items())


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:500] or type(exc).__name__
