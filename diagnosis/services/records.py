"""The typed reader of decision records (`export_decisions` / `import_decisions`) and what they refer to.

A record is one JSON object of a decisions file; each kind (`backoffice.decisions.KINDS`) writes
its records as plain dicts and reads them back through `Record`, whose accessors refuse a
missing, mistyped or unknown field with a `RecordError` naming it. `References` resolves what a
record names: a project by slug, a session by (project slug, sessionId), a user by username (a
user the database does not know is created inactive, without a password or any permission, so
the history keeps its names and nobody can log in as them until an administrator says so). It
also marks each session's trace changed once per import (`trace_changed`, `trace_change`).
"""

import datetime as dt
from collections.abc import Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models

from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession
from diagnosis.services.trace_version import TRACE_CHANGED, session_trace_changed


class RecordError(ValueError):
    """What is wrong with one field of a record (`field` as a path: `revisions[2].action`)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


class Record:
    """One record's fields, read by type; `finish()` refuses the fields nobody read (a typo, a newer format)."""

    def __init__(self, data: Any, *, path: str = ""):
        if not isinstance(data, dict):
            raise RecordError(path, "not a JSON object")
        self._data = data
        self._path = path
        self._read: set[str] = set()

    def _field(self, key: str) -> str:
        return f"{self._path}.{key}" if self._path else key

    def _get(self, key: str, kinds: tuple[type, ...], *, null: bool) -> Any:
        self._read.add(key)
        if key not in self._data:
            raise self.error(key, "missing")
        value = self._data[key]
        if value is None and null:
            return None
        # bool is an int: a flag is never a count, nor a count a flag.
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            expected = " or ".join(kind.__name__ for kind in kinds) + (" or null" if null else "")
            raise self.error(key, f"must be {expected}, not {type(value).__name__}")
        return value

    def error(self, key: str, message: str) -> RecordError:
        """The error of this record's field `key` (named by its path)."""
        return RecordError(self._field(key), message)

    def text(self, key: str, *, max_length: int | None = None) -> str:
        return self._text(key, max_length=max_length, null=False)

    def optional_text(self, key: str, *, max_length: int | None = None) -> str | None:
        """Text or null (null stands for none: no user, no session)."""
        return self._text(key, max_length=max_length, null=True)

    def _text(self, key: str, *, max_length: int | None, null: bool) -> str | None:
        value = self._get(key, (str,), null=null)
        if value is not None and max_length is not None and len(value) > max_length:
            raise self.error(key, f"at most {max_length} characters")
        return value

    def choice(self, key: str, choices: type[models.TextChoices], *, blank: bool = False) -> str:
        """One of `choices`' values; with `blank`, null for none (stored as "")."""
        value = self._get(key, (str,), null=blank)
        if value is None:
            return ""
        if value not in choices.values:
            raise self.error(key, f"unknown value {value!r}; one of {', '.join(choices.values)}")
        return value

    def instant(self, key: str) -> dt.datetime:
        value = self._get(key, (str,), null=False)
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            raise self.error(key, f"not an ISO 8601 instant: {value!r}") from None
        if moment.tzinfo is None:
            raise self.error(key, f"an instant needs its offset (a trailing Z for UTC): {value!r}")
        return moment

    def optional_instant(self, key: str) -> dt.datetime | None:
        return None if self._get(key, (str,), null=True) is None else self.instant(key)

    def flag(self, key: str, *, null: bool = False) -> bool | None:
        return self._get(key, (bool,), null=null)

    def count(self, key: str) -> int:
        value = self._get(key, (int,), null=False)
        if value < 0:
            raise self.error(key, "must not be negative")
        return value

    def mapping(self, key: str) -> dict:
        return self._get(key, (dict,), null=False)

    def records(self, key: str) -> Iterator["Record"]:
        """The list under `key`, each item a Record of its own (`key[0]`, `key[1]`, ...), finished when read."""
        for index, item in enumerate(self._get(key, (list,), null=False)):
            nested = Record(item, path=f"{self._field(key)}[{index}]")
            yield nested
            nested.finish()

    def finish(self) -> None:
        unknown = sorted(set(self._data) - self._read)
        if unknown:
            raise self.error(unknown[0], "unknown field")


class References:
    """What records name, resolved once per import: projects, sessions, users; and the sessions whose
    trace the import has marked changed, each once (`trace_changed`).

    `created_users` lists the usernames created (inactive) on the way.
    """

    _SESSION_FIELDS = ("pk", "project_id", "session_id", "created_at", "verifier_verdict")

    def __init__(self) -> None:
        self._projects: dict[str, Project] = {}
        self._sessions: dict[tuple[str, str], DiagnosisSession] = {}
        self._users: dict[str, AbstractBaseUser] = {}
        self._traces_changed: set[int] = set()
        self.created_users: list[str] = []

    def trace_changed(self, session_pk: int) -> None:
        """Mark the session's trace changed (`session_trace_changed`) the first time this import asks.

        Call before writing the session's rows (its feedback, votes, case, bad cases): the session's
        row lock comes first, as in a vote. The import is one transaction, so once is enough.
        """
        if session_pk not in self._traces_changed:
            session_trace_changed(session_pk=session_pk)
            self._traces_changed.add(session_pk)

    def trace_change(self, session_pk: int) -> dict[str, Any]:
        """For an UPDATE of the session's own row: `TRACE_CHANGED` the first time this import asks, then nothing."""
        if session_pk in self._traces_changed:
            return {}
        self._traces_changed.add(session_pk)
        return TRACE_CHANGED

    def project(self, record: Record, key: str = "project") -> Project:
        slug = record.text(key)
        if slug not in self._projects:
            project = Project.objects.filter(slug=slug).first()
            if project is None:
                raise record.error(key, f"unknown project {slug!r}: create it first")
            self._projects[slug] = project
        return self._projects[slug]

    def session(self, record: Record) -> DiagnosisSession:
        """The session the record's `project` and `sessionId` name; it must exist (import_sessions first)."""
        project = self.project(record)
        return self._session(record, project, record.text("sessionId"))

    def optional_session(self, record: Record, project: Project) -> DiagnosisSession | None:
        session_id = record.optional_text("sessionId")
        return None if session_id is None else self._session(record, project, session_id)

    def _session(self, record: Record, project: Project, session_id: str) -> DiagnosisSession:
        key = (project.slug, session_id)
        if key not in self._sessions:
            session = (
                DiagnosisSession.objects.only(*self._SESSION_FIELDS)
                .filter(project=project, session_id=session_id)
                .first()
            )
            if session is None:
                raise record.error(
                    "sessionId", f"no session {session_id!r} in project {project.slug!r}: import its sessions first"
                )
            self._sessions[key] = session
        return self._sessions[key]

    def user(self, record: Record, key: str, *, null: bool = True) -> AbstractBaseUser | None:
        """The user named by `record[key]` (null for none when `null`), created inactive when unknown."""
        username = record.optional_text(key, max_length=150) if null else record.text(key, max_length=150)
        if username is None:
            return None
        if not username:
            raise record.error(key, "a username cannot be empty")
        if username not in self._users:
            user_model = get_user_model()
            user = user_model.objects.filter(**{user_model.USERNAME_FIELD: username}).first()
            if user is None:
                user = user_model(**{user_model.USERNAME_FIELD: username}, is_active=False)
                user.set_unusable_password()
                user.save()
                self.created_users.append(username)
            self._users[username] = user
        return self._users[username]


def username_of(user: AbstractBaseUser | None) -> str | None:
    """How a record names a user: the username, null for none."""
    return None if user is None else user.get_username()
