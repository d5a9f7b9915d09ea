"""People's decisions in and out as JSON Lines (`export_decisions`, `import_decisions`): one record a line,
`{"kind": "case", ...}`, for every kind in `KINDS`.

The kinds live in the apps that own their rows (a writer of records and a reader that stores
one); this module only composes them, as the back office reads across the apps. A new kind is
one entry in `KINDS`. Sessions themselves travel with `export_sessions`; a record names its
session by (project slug, sessionId), a case by its UUID, a person by username.

Import is one transaction for the whole file: each line is stored in a savepoint, and when any
line is refused (with its number, the field and why) the file's changes are all rolled back, so
a file is imported entirely or not at all. Re-importing a file changes nothing.

A record that changes what a session's trace or its read shows (its feedback, events, case, bad
case; an end user's vote, for the lock order) moves the session's trace version, once per import
however many records it has, before the record's rows are written (`References.trace_changed`).
"""

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, transaction

from cases.services.decision_records import bad_case_records, bad_case_store, case_records, case_store
from core.tenancy.models import Project
from diagnosis.services.decision_records import (
    claim_correction_records,
    claim_correction_store,
    review_records,
    review_store,
    session_state_records,
    session_state_store,
)
from diagnosis.services.records import Record, RecordError, References
from diagnosis.services.transfer import json_line
from feedback.services.decision_records import (
    end_user_vote_records,
    end_user_vote_store,
    feedback_event_records,
    feedback_event_store,
)


@dataclass(frozen=True, slots=True)
class DecisionKind:
    """A kind of record: its writer (`records(project=...)`: plain dicts, in a stable order) and its
    reader (`store(record=..., references=...)`: True when it changed something)."""

    records: Callable[..., Iterator[dict[str, Any]]]
    store: Callable[..., bool]


# Exported in this order; any order imports, since a record refers only to sessions and people.
KINDS: dict[str, DecisionKind] = {
    "session_state": DecisionKind(records=session_state_records, store=session_state_store),
    "feedback": DecisionKind(records=feedback_event_records, store=feedback_event_store),
    "end_user_vote": DecisionKind(records=end_user_vote_records, store=end_user_vote_store),
    "case": DecisionKind(records=case_records, store=case_store),
    "bad_case": DecisionKind(records=bad_case_records, store=bad_case_store),
    "review": DecisionKind(records=review_records, store=review_store),
    "claim_correction": DecisionKind(records=claim_correction_records, store=claim_correction_store),
}


def decision_export_lines(*, project: Project | None = None) -> Iterator[str]:
    """One JSON line (`json_line`) per record of every kind, kind by kind; `project` keeps one project's."""
    for kind, spec in KINDS.items():
        for record in spec.records(project=project):
            yield json_line({"kind": kind, **record})


@dataclass
class DecisionImport:
    """What an import did: records stored (created or changed) and unchanged, by kind; users created
    inactive; and the refused lines ("line 3: status: unknown value ..."), in which case nothing stayed."""

    stored: Counter = field(default_factory=Counter)
    unchanged: Counter = field(default_factory=Counter)
    created_users: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def decision_import_lines(*, lines: Iterable[bytes]) -> DecisionImport:
    """Store every line's record, all in one transaction, rolled back when any line is refused.

    Blank lines are skipped. Every line is read even after a refusal, so one run names them all.
    """
    report = DecisionImport()
    references = References()
    with transaction.atomic():
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                with transaction.atomic():
                    kind, changed = _store(raw, references)
            except RecordError as exc:
                report.errors.append(f"line {number}: {exc}")
            except DatabaseError as exc:
                report.errors.append(f"line {number}: the database refused it: {' '.join(str(exc).split())[:500]}")
            else:
                (report.stored if changed else report.unchanged)[kind] += 1
                continue
            # The line's savepoint is gone, and with it what it created (a user, say): forget what was resolved.
            references = References()
        if report.errors:
            transaction.set_rollback(True)
            report.stored.clear()
            report.unchanged.clear()
        else:
            report.created_users = references.created_users
    return report


def _store(raw: bytes, references: References) -> tuple[str, bool]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordError("", f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise RecordError("", f"not JSON: {exc.msg} at column {exc.colno}") from None
    record = Record(data)
    kind = record.text("kind")
    if kind not in KINDS:
        raise RecordError("kind", f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
    changed = KINDS[kind].store(record=record, references=references)
    record.finish()
    return kind, changed
