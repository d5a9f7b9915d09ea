"""Oversize and unreadable request bodies: a 413 (or 400) in the endpoint's own JSON envelope, from
the project's one bounded reader (core/api/bodies.py), whatever the parser and the declared length,
and nothing logged as a traceback.

The tests run at the production settings' limits, read from `config.settings.production` itself:
the bug these tests hold back was Django's DATA_UPLOAD_MAX_MEMORY_SIZE (equal to the API's limit in
production) refusing a JSON body with an HTML 400 before the API's reader ran, which a test that
lowers only the project's limit cannot see.
"""

import gzip
import io
import json
import logging

import pytest
from google.rpc import status_pb2

from diagnosis.models import DiagnosisSession
from tests.factories import chat_payload, session_ingest
from tests.production import production_settings

pytestmark = pytest.mark.django_db

LIMITS = ("SELFEVAL_MAX_BODY_BYTES", "DATA_UPLOAD_MAX_MEMORY_SIZE", "SELFEVAL_OTLP_MAX_BODY_BYTES")
SESSION_ID = "s-20261129-0001"
# Every endpoint that reads a body, with the media type it reads and the client it needs.
WRITES = [
    ("api", "/api/sessions", "application/json"),
    ("api", "/api/sessions/batch", "application/json"),
    ("api", "/api/sessions/batch", "application/x-ndjson"),
    ("api", "/api/feedback", "application/json"),
    ("api", f"/api/sessions/{SESSION_ID}/feedback-token", "application/json"),
    ("api", "/api/evolution/verify", "application/json"),
    ("staff_api", "/api/evolution/thresholds", "application/json"),
    ("api", "/v1/traces", "application/json"),
    ("api", "/v1/traces", "application/x-protobuf"),
]
WRITE_IDS = [f"{path} {media_type}" for _, path, media_type in WRITES]


@pytest.fixture(scope="module")
def production_limits() -> dict[str, int]:
    return production_settings(*LIMITS)


@pytest.fixture
def at_production_limits(settings, production_limits, project):
    for name, value in production_limits.items():
        setattr(settings, name, value)
    session_ingest(project, chat_payload(sessionId=SESSION_ID))  # so that every route reads its body
    return production_limits


@pytest.fixture
def no_traceback(caplog):
    caplog.set_level(logging.INFO)
    yield
    tracebacks = [record for record in caplog.records if record.exc_info or record.name.startswith("django.security")]
    assert not tracebacks, [record.getMessage() for record in tracebacks]


def _limit(path: str, limits: dict[str, int]) -> int:
    return limits["SELFEVAL_OTLP_MAX_BODY_BYTES" if path.startswith("/v1/") else "SELFEVAL_MAX_BODY_BYTES"]


def _body_of(size: int) -> bytes:
    """A JSON object (and an NDJSON line) of exactly `size` bytes."""
    head, tail = b'{"query": "', b'"}'
    return head + b"q" * (size - len(head) - len(tail)) + tail


def _assert_refused(response, status: int, path: str) -> dict:
    assert response.status_code == status, (response.status_code, response["Content-Type"], response.content[:200])
    if path.startswith("/v1/") and response["Content-Type"] == "application/x-protobuf":
        return {"message": status_pb2.Status.FromString(response.content).message}
    assert response["Content-Type"] == "application/json", response.content[:200]
    body = response.json()
    if path == "/api/feedback":  # seed document 000's envelope
        assert body["success"] is False
        return body
    if path.startswith("/v1/"):  # OTLP's google.rpc.Status
        return body
    return body["error"]


def _assert_too_large(response, path: str) -> dict:
    """A 413 in the endpoint's envelope, with its error code: `payload_too_large` in the API's, the
    seed's `success: false` on the feedback endpoint (which has no code), OTLP's google.rpc.Status."""
    error = _assert_refused(response, 413, path)
    if path == "/api/feedback":
        assert "(SELFEVAL_MAX_BODY_BYTES)" in error["message"]
    elif not path.startswith("/v1/"):
        assert error["code"] == "payload_too_large", error
    return error


def _over_the_limit(how: str, limit: int) -> tuple[bytes, dict[str, str], str]:
    """The body, the extra headers, and what the 413's message must name."""
    if how == "one byte over":
        return _body_of(limit + 1), {}, str(limit)
    if how == "gzip inflating past":
        compressed = gzip.compress(_body_of(limit + 1))
        assert len(compressed) < limit // 100
        return compressed, {"HTTP_CONTENT_ENCODING": "gzip"}, f"Inflated request body exceeds the limit of {limit}"
    assert how == "declared 10^20"
    return b"{}", {"CONTENT_LENGTH": str(10**20)}, "100000000000000000000"


@pytest.mark.parametrize("how", ["one byte over", "gzip inflating past", "declared 10^20"])
@pytest.mark.parametrize(("client", "path", "media_type"), WRITES, ids=WRITE_IDS)
def test_a_body_over_the_limit_is_a_413_in_the_endpoints_envelope_with_its_code(
    request, at_production_limits, no_traceback, client, path, media_type, how
):
    body, headers, named = _over_the_limit(how, _limit(path, at_production_limits))
    api = request.getfixturevalue(client)

    response = api.generic("POST" if "thresholds" not in path else "PUT", path, body, media_type, **headers)

    assert named in json.dumps(_assert_too_large(response, path), ensure_ascii=False)


def test_the_api_reads_bodies_past_djangos_form_limit(api, at_production_limits, settings, no_traceback):
    """The API's limit alone decides: a body over DATA_UPLOAD_MAX_MEMORY_SIZE (the admin's forms)
    but within SELFEVAL_MAX_BODY_BYTES is read and stored."""
    payload = chat_payload(answer="连接池耗尽。" * 2000)
    body = json.dumps(payload).encode()
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body) // 2

    response = api.generic("POST", "/api/sessions", body, "application/json")

    assert response.status_code == 200, response.content[:300]  # replaced: the fixture stored it first
    assert DiagnosisSession.objects.get(session_id=SESSION_ID).answer == payload["answer"]


class _BrokenStream(io.RawIOBase):
    """A client that went away mid-body."""

    def read(self, size=-1):
        raise OSError("connection reset by peer")


@pytest.mark.parametrize(("client", "path", "media_type"), WRITES, ids=WRITE_IDS)
def test_a_body_that_cannot_be_read_is_a_400(request, at_production_limits, no_traceback, client, path, media_type):
    api = request.getfixturevalue(client)
    method = "POST" if "thresholds" not in path else "PUT"

    response = api.generic(method, path, b"{}", media_type, **{"wsgi.input": _BrokenStream(), "CONTENT_LENGTH": "200"})

    assert "could not be read" in json.dumps(_assert_refused(response, 400, path))


def test_a_body_shorter_than_its_content_length_is_a_400(api, at_production_limits, no_traceback):
    response = api.generic(
        "POST", "/api/sessions", b"{}", "application/json", **{"wsgi.input": io.BytesIO(b"{}"), "CONTENT_LENGTH": "200"}
    )

    error = _assert_refused(response, 400, "/api/sessions")
    assert error["message"] == "The request body ended after 2 of the 200 bytes of its Content-Length."


@pytest.mark.parametrize("length", ["-1", "-200"])
def test_a_content_length_that_is_no_length_is_a_400(api, at_production_limits, no_traceback, length):
    response = api.generic("POST", "/api/sessions", b"{}", "application/json", CONTENT_LENGTH=length)

    assert _assert_refused(response, 400, "/api/sessions")["code"] == "parse_error"
