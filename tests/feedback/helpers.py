"""Building stored sessions for the feedback, cases and trace tests."""

import json
from typing import Any

from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession
from tests.factories import chat_payload, session_ingest


def make_session(project: Project, payload: dict[str, Any] | None = None, **overrides: Any) -> DiagnosisSession:
    """Store a session the way ingestion does: a given payload, or the chat payload with `overrides`."""
    return session_ingest(project, payload or chat_payload(**overrides))


def post_json(client, url: str, body: Any, **extra: Any):
    return client.post(url, data=json.dumps(body), content_type="application/json", **extra)
