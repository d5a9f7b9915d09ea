"""A key twice in one JSON object is a 400 naming the key, on every endpoint that reads JSON.

Python's decoder keeps the last value silently: `{"sessionId": "a", ..., "sessionId": "b"}` stored
`b`, where another JSON reader in front of the API (a gateway, a log) may have seen `a`. The one
JSON decoder of request bodies (`core.api.parsers.json_loads_checked`) refuses it.
"""

import json

import pytest

from diagnosis.models import DiagnosisSession
from evolution.models import VerificationLog
from tests.factories import chat_payload, session_ingest

pytestmark = pytest.mark.django_db

SESSION_ID = "s-20261129-0001"


def _with_repeated_key(body: dict, key: str, value) -> str:
    """`body` as JSON text, with `key` written a second time at its end."""
    return json.dumps(body, ensure_ascii=False)[:-1] + f", {json.dumps(key)}: {json.dumps(value)}}}"


def _post(client, path: str, text: str, content_type: str = "application/json", method: str = "post"):
    return getattr(client, method)(path, data=text.encode(), content_type=content_type)


def test_a_repeated_session_id_is_refused_and_nothing_is_stored(api, project):
    text = _with_repeated_key(chat_payload(sessionId="s-first"), "sessionId", "s-second")

    response = _post(api, "/api/sessions", text)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["fields"] == {
        "sessionId": ["The key 'sessionId' appears more than once in this object."]
    }
    assert not DiagnosisSession.objects.exists()


def test_a_repeated_key_deep_in_the_body_is_named_by_its_path(api, project):
    payload = chat_payload()
    text = json.dumps(payload).replace('"status": "SUCCESS"', '"status": "SUCCESS", "status": "FAILED"', 1)

    response = _post(api, "/api/sessions", text)

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["toolInvocations.0.status"]


def test_a_batch_array_with_a_repeated_key_is_refused_whole(api, project):
    second = _with_repeated_key(chat_payload(sessionId="s-2"), "mode", "aiops")
    text = f"[{json.dumps(chat_payload(sessionId='s-1'))}, {second}]"

    response = _post(api, "/api/sessions/batch", text)

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["1.mode"]
    assert not DiagnosisSession.objects.exists()


def test_an_ndjson_line_with_a_repeated_key_is_its_own_error(api, project):
    lines = [json.dumps(chat_payload(sessionId="s-1")), _with_repeated_key(chat_payload(sessionId="s-2"), "query", "q")]

    response = _post(api, "/api/sessions/batch", "\n".join(lines), "application/x-ndjson")

    assert response.status_code == 200
    first, second = response.json()["results"]
    assert first["status"] == "created"
    assert second["status"] == "error"
    assert second["error"]["fields"] == {"query": ["The key 'query' appears more than once in this object."]}
    assert set(DiagnosisSession.objects.values_list("session_id", flat=True)) == {"s-1"}


def test_feedback_names_the_repeated_key_in_the_seed_envelope(api, project):
    session_ingest(project, chat_payload(sessionId=SESSION_ID))
    text = _with_repeated_key({"sessionId": SESSION_ID, "feedback": "useful"}, "feedback", "not_useful")

    response = _post(api, "/api/feedback", text)

    assert response.status_code == 400
    assert response.json() == {
        "success": False,
        "message": "feedback: The key 'feedback' appears more than once in this object.",
    }


def test_a_feedback_token_request_with_a_repeated_key_is_refused(api, project):
    session_ingest(project, chat_payload(sessionId=SESSION_ID))
    text = _with_repeated_key({"endUserId": "u-1"}, "endUserId", "u-2")

    response = _post(api, f"/api/sessions/{SESSION_ID}/feedback-token", text)

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["endUserId"]


def test_an_evolution_verification_with_a_repeated_key_is_refused(api, project):
    text = _with_repeated_key({"query": "q", "oldResponse": "a", "newResponse": "b"}, "newResponse", "c")

    response = _post(api, "/api/evolution/verify", text)

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["newResponse"]
    assert not VerificationLog.objects.exists()


def test_a_thresholds_update_with_a_repeated_key_is_refused(staff_api):
    text = _with_repeated_key({"thresholds": {"min_confidence": 0.8}}, "thresholds", {"min_confidence": 0.1})

    response = _post(staff_api, "/api/evolution/thresholds", text, method="put")

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["thresholds"]


def test_an_otlp_json_export_with_a_repeated_key_is_refused_naming_it(api, project):
    text = '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a", "name": "b"}]}]}]}'

    response = _post(api, "/v1/traces", text)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["message"] == (
        "The body is not an OTLP/JSON trace export: "
        "resourceSpans.0.scopeSpans.0.spans.0.name: The key 'name' appears more than once in this object."
    )
