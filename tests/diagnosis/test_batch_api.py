"""POST /api/sessions/batch, and compressed bodies on every write endpoint."""

import gzip
import json
import tracemalloc

import pytest
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext

from diagnosis.models import DiagnosisSession, EvidenceRef, ToolInvocation
from tests.factories import aiops_payload, chat_payload, session_ingest, with_invocations

pytestmark = pytest.mark.django_db

URL = "/api/sessions/batch"


def post_batch(client, items, **extra):
    return client.post(URL, data=json.dumps(items), content_type="application/json", **extra)


def post_ndjson(client, lines: list[str], **extra):
    return client.post(URL, data="\n".join(lines) + "\n", content_type="application/x-ndjson", **extra)


def stored_ids(project) -> set[str]:
    return set(DiagnosisSession.objects.filter(project=project).values_list("session_id", flat=True))


def test_each_item_is_answered_in_order_created_replaced_or_error(api, project):
    session_ingest(project, chat_payload(sessionId="s-old"))
    invalid = chat_payload(sessionId="s-bad", status="DONE")
    invalid["toolInvocations"][0]["retrievalDetails"]["matchLevel"] = "L9"

    response = post_batch(api, [chat_payload(sessionId="s-new"), invalid, aiops_payload(sessionId="s-old")])

    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [(r["index"], r["sessionId"], r["status"]) for r in results] == [
        (0, "s-new", "created"),
        (1, "s-bad", "error"),
        (2, "s-old", "replaced"),
    ]
    assert results[0]["session"]["sessionId"] == "s-new" and results[2]["session"]["mode"] == "aiops"
    assert set(results[1]["error"]["fields"]) == {"status", "toolInvocations.0.retrievalDetails.matchLevel"}
    assert stored_ids(project) == {"s-new", "s-old"}


def test_an_item_the_database_refuses_leaves_nothing_of_itself_and_the_others_are_stored(api, project, monkeypatch):
    real_bulk_create = EvidenceRef.objects.bulk_create

    def refuse_the_second(refs, *args, **kwargs):
        if any(ref.session.session_id == "s-2" for ref in refs):
            raise DataError("value too long")
        return real_bulk_create(refs, *args, **kwargs)

    monkeypatch.setattr(EvidenceRef.objects, "bulk_create", refuse_the_second)

    response = post_batch(api, [chat_payload(sessionId=f"s-{n}") for n in (1, 2, 3)])

    assert [r["status"] for r in response.json()["results"]] == ["created", "error", "created"]
    assert response.json()["results"][1]["error"]["code"] == "database_refused"
    assert stored_ids(project) == {"s-1", "s-3"}
    assert not ToolInvocation.objects.filter(session__session_id="s-2").exists()


def test_ndjson_lines_are_items_and_an_unreadable_line_is_its_own_error(api, project):
    lines = [json.dumps(chat_payload(sessionId="s-a")), "", "{not json", json.dumps(chat_payload(sessionId="s-b"))]

    response = post_ndjson(api, lines)

    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [(r["index"], r["status"]) for r in results] == [(0, "created"), (1, "error"), (2, "created")]
    assert "Line 3" in results[1]["error"]["message"] and results[1]["sessionId"] is None
    assert stored_ids(project) == {"s-a", "s-b"}


def test_a_line_with_a_nul_names_the_field(api, project):
    payload = chat_payload(sessionId="s-nul", query="a\u0000b")

    result = post_ndjson(api, [json.dumps(payload)]).json()["results"][0]

    assert result["status"] == "error" and "query" in result["error"]["fields"]
    assert not DiagnosisSession.objects.exists()


def test_more_items_than_the_maximum_are_refused_before_any_is_stored(api, project, settings):
    settings.SELFEVAL_BATCH_MAX_ITEMS = 3

    response = post_batch(api, [chat_payload(sessionId=f"s-{n}") for n in range(4)])

    assert response.status_code == 400
    assert "SELFEVAL_BATCH_MAX_ITEMS" in response.json()["error"]["fields"]["non_field_errors"][0]
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize("body", ['{"sessionId": "s-1"}', '"text"', "[1,"])
def test_a_body_that_is_not_an_array_is_a_400(api, body):
    response = api.post(URL, data=body, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid", "parse_error"}


def test_batch_needs_a_project_key(anonymous, staff_api):
    assert post_batch(anonymous, [chat_payload()]).status_code == 401
    assert post_batch(staff_api, [chat_payload()]).status_code == 403
    assert staff_api.get(URL).status_code == 405


def _batch_queries(api, count: int, offset: int) -> int:
    items = [with_invocations(chat_payload(sessionId=f"q-{offset + n}"), 10) for n in range(count)]
    with CaptureQueriesContext(connection) as queries:
        response = post_batch(api, items)
    assert [r["status"] for r in response.json()["results"]] == ["created"] * count
    return len(queries)


def _single_queries(api, offset: int) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = api.post(
            "/api/sessions",
            data=json.dumps(with_invocations(chat_payload(sessionId=f"q-{offset}"), 10)),
            content_type="application/json",
        )
    assert response.status_code == 201
    return len(queries)


def test_sql_statements_per_item_are_constant_and_those_of_one_session(api, project):
    api.get("/api/sessions")  # the API key's row is now in the cache: no request reads it again
    one, two, ten = _batch_queries(api, 1, 0), _batch_queries(api, 2, 100), _batch_queries(api, 10, 200)

    assert two == 2 * one and ten == 10 * one
    # Each item costs what one POST /api/sessions costs: nothing is spent per batch.
    assert one == _single_queries(api, 300)


# Compressed bodies: one bounded reader (core/api/bodies.py) for every write endpoint.


def test_a_gzip_batch_is_inflated(api, project):
    body = gzip.compress(json.dumps([chat_payload(sessionId="s-z")]).encode())

    response = api.post(URL, data=body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip")

    assert response.json()["results"][0]["status"] == "created"


@pytest.mark.parametrize(
    ("url", "body", "expected"),
    [
        ("/api/sessions", chat_payload(sessionId="s-gz"), 201),
        ("/api/feedback", {"sessionId": "s-existing", "feedback": "useful"}, 200),
        ("/api/evolution/verify", {"query": "q", "oldResponse": "a", "newResponse": "b"}, 200),
    ],
)
def test_every_write_endpoint_takes_gzip(api, project, url, body, expected):
    session_ingest(project, chat_payload(sessionId="s-existing"))

    response = api.post(
        url,
        data=gzip.compress(json.dumps(body).encode()),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
    )

    assert response.status_code == expected, response.content


@pytest.mark.parametrize("url", ["/api/sessions", URL])
def test_a_body_that_does_not_inflate_is_a_400(api, url):
    response = api.post(url, data=b"not gzip at all", content_type="application/json", HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 400
    assert "does not inflate" in response.json()["error"]["message"]


def test_feedback_answers_a_bad_gzip_in_its_own_envelope(api):
    response = api.post(
        "/api/feedback", data=b"\x1f\x8bxx", content_type="application/json", HTTP_CONTENT_ENCODING="gzip"
    )

    assert response.status_code == 400
    assert response.json()["success"] is False


def test_an_unknown_content_encoding_is_a_415(api):
    response = post_batch(api, [chat_payload()], HTTP_CONTENT_ENCODING="br")

    assert response.status_code == 415
    assert not DiagnosisSession.objects.exists()


def test_a_gzip_bomb_is_a_413_without_inflating_past_the_limit(api, settings):
    settings.SELFEVAL_MAX_BODY_BYTES = 1_000_000
    bomb = gzip.compress(b"[" + b" " * 50_000_000 + b"]", compresslevel=9)  # 50 MB of spaces in about 50 kB
    assert len(bomb) < 100_000

    tracemalloc.start()
    try:
        response = api.post(URL, data=bomb, content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert response.status_code == 413
    assert "Inflated request body" in response.json()["error"]["message"]
    assert peak < 5 * settings.SELFEVAL_MAX_BODY_BYTES


def test_a_declared_length_over_the_limit_is_a_413_before_reading(api, settings):
    settings.SELFEVAL_MAX_BODY_BYTES = 1000

    response = post_batch(api, [chat_payload(answer="x" * 2000)])

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
