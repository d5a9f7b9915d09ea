"""The version of a session's trace: what the trace API (trace/) keys its cached body and its ETag by.

Every write that changes what a session's trace shows adds one to the session's `trace_version`
inside the write's transaction, so the new version commits with what it versions and a reader
that sees it sees the write. A write that already updates the session row adds the one in that
UPDATE (`TRACE_CHANGED`; a re-posted session, locked, counts it on the row it saves); the others
(cases, bad cases) call `session_trace_changed`.
A turn's trace also lists the other turns of its conversation: the trace API reads their versions
beside its own, so a write marks only the session it changes.
Every answer built from a session's version (the trace, the session read) names that version in its
ETag the one way `version_etag` writes it.
"""

import hashlib
import json
from typing import Any

from django.db.models import F

from diagnosis.models import DiagnosisSession

TRACE_CHANGED = {"trace_version": F("trace_version") + 1}


def session_trace_changed(*, session_pk: int) -> None:
    """Mark the session's trace changed. Call inside the transaction of the write and before locking
    the session's other rows (its case, its bad case): this takes the session's row lock, which votes
    and evaluations take first, so no two writers wait on each other in opposite orders."""
    DiagnosisSession.objects.filter(pk=session_pk).update(**TRACE_CHANGED)


def version_etag(*, route: str, session_pk: int, version: int, depends_on: list[Any]) -> str:
    """The strong ETag of an answer built from one version of a session's trace: `route` names the
    answer (the trace and the session read of one version have other bodies, so other ETags),
    `depends_on` (JSON values) whatever else shapes the body, as a digest."""
    digest = hashlib.blake2b(json.dumps([route, *depends_on]).encode(), digest_size=8).hexdigest()
    return f'"{route}.{session_pk}.{version}.{digest}"'
