"""With the database down, every API route answers 503 in its own envelope; /healthz says 503 too.

The outage is every SQL statement failing the way a lost server fails them (Django's
OperationalError), through Django's own statement hook (`connection.execute_wrapper`).
"""

import pytest
from django.db import OperationalError, connection

from tests.factories import chat_payload, session_ingest
from tests.feedback.helpers import post_json
from tests.security.test_access_sweep import API_ROUTES

pytestmark = pytest.mark.django_db


def _database_down(execute, sql, params, many, context):
    raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")


def _assert_envelope(response, status: int) -> None:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json"


@pytest.mark.parametrize("path", API_ROUTES)
@pytest.mark.parametrize("method", ["get", "post"])
def test_no_api_route_answers_a_server_error_when_the_database_is_down(api, project, path, method):
    api.get("/api/sessions")  # the key is verified and cached: the outage meets the views' own queries
    with connection.execute_wrapper(_database_down):
        response = getattr(api, method)(path, data={}, format="json")

    assert response.status_code == 503 or 400 <= response.status_code < 500, (path, response.status_code)
    assert response["Content-Type"] == "application/json", path


@pytest.mark.parametrize(
    "path", ["/api/sessions", "/api/sessions/s-1", "/api/trace/s-1", "/api/cases", "/api/evolution/thresholds"]
)
def test_reads_answer_503_in_the_error_envelope(api, project, path):
    api.get("/api/sessions")
    with connection.execute_wrapper(_database_down):
        response = api.get(path)

    _assert_envelope(response, 503)
    assert response.json()["error"]["code"] == "database_unavailable"


def test_ingestion_and_evolution_answer_503(api, project):
    api.get("/api/sessions")
    with connection.execute_wrapper(_database_down):
        ingested = post_json(api, "/api/sessions", chat_payload())
        verified = post_json(api, "/api/evolution/verify", {"query": "q", "oldResponse": "a", "newResponse": "b"})

    _assert_envelope(ingested, 503)
    _assert_envelope(verified, 503)


def test_feedback_answers_503_in_the_seed_envelope(api, project):
    session_ingest(project, chat_payload())
    api.get("/api/sessions")
    with connection.execute_wrapper(_database_down):
        response = post_json(api, "/api/feedback", {"sessionId": "s-20261129-0001", "feedback": "useful"})

    _assert_envelope(response, 503)
    assert response.json()["success"] is False


def test_a_key_not_yet_cached_meets_the_outage_with_a_503(api, project):
    with connection.execute_wrapper(_database_down):
        response = api.get("/api/sessions")

    _assert_envelope(response, 503)


def test_healthz_says_503_too(client):
    with connection.execute_wrapper(_database_down):
        response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
