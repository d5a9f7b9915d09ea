"""Building stored sessions for the feedback, cases and trace tests."""

import json
from typing import Any

from diagnosis.models import DiagnosisSession, Project
from diagnosis.serializers import SessionIngestSerializer
from diagnosis.services.ingestion import session_upsert
from tests.factories import chat_payload


def make_session(project: Project, payload: dict[str, Any] | None = None, **overrides: Any) -> DiagnosisSession:
    """Store a session the way ingestion does (validated payload, session_upsert)."""
    serializer = SessionIngestSerializer(data=payload or chat_payload(**overrides))
    serializer.is_valid(raise_exception=True)
    return session_upsert(project=project, data=serializer.validated_data).session


def post_json(client, url: str, body: Any, **extra: Any):
    return client.post(url, data=json.dumps(body), content_type="application/json", **extra)
