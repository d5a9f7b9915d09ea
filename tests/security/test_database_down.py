"""With the database down, every route answers 503 with Retry-After, at once: the API in its own
envelope, /healthz, and the admin with its 503 page (its login included).

Two outages: every SQL statement failing the way a lost server fails them (Django's
OperationalError, through Django's own statement hook `connection.execute_wrapper`), and the real
thing, the default connection pointed at a database that cannot be reached (PostgreSQL at a closed
port, SQLite at a file that cannot be opened), where connecting itself fails. How fast that is
answered is the connect and pool timeouts the driver gets, asserted here, never timed.
"""

import copy
import socket
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections
from django.test import Client
from psycopg.conninfo import conninfo_to_dict, timeout_from_conninfo

from tests.admin.conftest import PASSWORD, logged_in
from tests.factories import UserFactory, chat_payload, session_ingest
from tests.feedback.helpers import post_json
from tests.production import production_settings
from tests.security.test_access_sweep import API_ROUTES

pytestmark = pytest.mark.django_db


def _database_down(execute, sql, params, many, context):
    raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")


def _assert_envelope(response, status: int) -> None:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json"
    if status == 503:
        assert response["Retry-After"] == "5"


@pytest.mark.parametrize("path", API_ROUTES)
@pytest.mark.parametrize("method", ["get", "post"])
def test_no_api_route_answers_a_server_error_when_the_database_is_down(api, project, path, method):
    api.get("/api/sessions")  # the key is verified and cached: the outage meets the views' own queries
    with connection.execute_wrapper(_database_down):
        response = getattr(api, method)(path, data={}, format="json")

    # 503, or an answer that needed no database (a 4xx, or an OTLP export without spans): never a 500.
    assert response.status_code == 503 or response.status_code < 500, (path, response.status_code)
    assert response["Content-Type"] == "application/json", path
    if response.status_code == 503:
        assert response["Retry-After"] in {"5", "10"}, path  # OTLP exporters are asked to wait 10 s


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
    assert response["Retry-After"] == "5"


def test_an_admin_page_answers_the_503_page(admin_user):
    client = logged_in(admin_user)
    with connection.execute_wrapper(_database_down):
        response = client.get("/admin/")

    _assert_page(response)


# -- the database cannot be reached ------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _database_unreachable():
    """The default connection, meanwhile, to a database nobody can connect to: every request meets
    a connection that fails, through the real driver (and pool)."""
    reachable = connections[DEFAULT_DB_ALIAS]
    params = copy.deepcopy(reachable.settings_dict)
    if reachable.vendor == "postgresql":
        params.update(HOST="127.0.0.1", PORT=str(_closed_port()))
    else:
        params["NAME"] = "/nonexistent-directory/selfeval.sqlite3"
    # Another alias: Django keys connection pools by alias, and this one needs a pool of its own.
    unreachable = reachable.__class__(params, alias="unreachable")
    connections[DEFAULT_DB_ALIAS] = unreachable
    try:
        yield unreachable
    finally:
        connections[DEFAULT_DB_ALIAS] = reachable
        unreachable.close()
        if reachable.vendor == "postgresql":
            unreachable.close_pool()


@pytest.fixture
def unreachable_database():
    with _database_unreachable() as unreachable:
        yield unreachable


def _assert_page(response) -> None:
    assert response.status_code == 503, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Retry-After"] == "5"
    assert b"Service unavailable" in response.content


def test_api_reads_and_writes_answer_503_when_the_database_cannot_be_reached(api, project, unreachable_database):
    reads = [api.get(path) for path in ("/api/sessions", "/api/trace/s-1", "/api/cases")]
    writes = [
        post_json(api, "/api/sessions", chat_payload()),
        post_json(api, "/api/evolution/verify", {"query": "q", "oldResponse": "a", "newResponse": "b"}),
    ]

    for response in [*reads, *writes]:
        _assert_envelope(response, 503)
        assert response.json()["error"]["code"] == "database_unavailable"


def test_feedback_and_otlp_answer_503_in_their_own_envelopes(api, project, unreachable_database):
    feedback = post_json(api, "/api/feedback", {"sessionId": "s-1", "feedback": "useful"})
    otlp = api.post("/v1/traces", data=b"{}", content_type="application/json")

    _assert_envelope(feedback, 503)
    assert feedback.json()["success"] is False
    assert otlp.status_code == 503
    assert otlp["Retry-After"] == "10"


def test_healthz_answers_503_when_the_database_cannot_be_reached(client, unreachable_database):
    response = client.get("/healthz")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {"status": "unavailable", "database": "OperationalError"}


def test_the_admin_login_answers_the_503_page(db, unreachable_database):
    response = Client().post("/admin/login/", {"username": "alice", "password": PASSWORD, "next": "/admin/"})

    _assert_page(response)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_logged_in_admin_page_answers_the_503_page_in_the_users_language(language):
    client = logged_in(UserFactory(username="alice", is_staff=True, is_superuser=True))
    client.cookies["django_language"] = language
    with _database_unreachable():
        response = client.get("/admin/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    expected = "Service unavailable" if language == "en" else "服务暂不可用"
    assert expected in response.content.decode()


@pytest.mark.postgres
def test_request_connections_get_the_short_connect_and_pool_timeouts(settings):
    """The bound of an outage is what psycopg and its pool are given: connect_timeout on the
    connection itself, and the pool's wait for a connection."""
    options = settings.DATABASES["default"]["OPTIONS"]
    connection.ensure_connection()

    assert conninfo_to_dict(connection.connection.info.dsn)["connect_timeout"] == str(options["connect_timeout"])
    if "pool" in options:
        assert connection.pool.timeout == options["pool"]["timeout"]
        assert connection.pool.kwargs["connect_timeout"] == options["connect_timeout"]


def test_production_defaults_answer_an_outage_within_a_second():
    production = production_settings("DATABASES")["DATABASES"]["default"]["OPTIONS"]

    assert production["connect_timeout"] == 2  # psycopg's (and libpq's) minimum
    assert production["pool"]["timeout"] == 0.5  # a request's wait for a connection, outage or not


def test_a_connect_timeout_below_two_seconds_is_two_and_the_operations_guide_says_so(settings):
    """Two seconds is the floor (libpq's connectDBComplete, psycopg's timeout_from_conninfo), so
    the guide must not promise less for a server that does not answer."""
    operations = (Path(settings.BASE_DIR) / "docs" / "operations.md").read_text(encoding="utf-8")
    outage = operations.split("## When the database is down", 1)[1].split("\n## ", 1)[0]

    assert timeout_from_conninfo({"connect_timeout": "1"}) == 2
    assert "a refused connection (the usual outage: nothing listens) fails at once" in outage
    assert "2 s at least: libpq and psycopg count a lower value as 2" in " ".join(outage.split())
