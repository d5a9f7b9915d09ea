"""`GET /api/sessions/<sessionId>` answers an ETag named by the session's trace version (as the trace
does, diagnosis.services.trace_version.version_etag), a 304 without a body to a matching If-None-Match,
and a new ETag after every write to the session."""

import json

import pytest

from tests import contract
from tests.factories import chat_payload, session_ingest

pytestmark = pytest.mark.django_db

SESSION_ID = "s-20261129-0001"
URL = f"/api/sessions/{SESSION_ID}"


@pytest.fixture
def session(project):
    return session_ingest(project, chat_payload(sessionId=SESSION_ID))


def test_a_read_has_a_strong_etag_that_is_not_the_traces(api, session):
    response = api.get(URL)

    assert response.status_code == 200 and response.json()["sessionId"] == SESSION_ID
    etag = response["ETag"]
    assert etag.startswith('"session.') and etag.endswith('"')
    # One version of the session, two bodies: the trace's ETag is another.
    assert api.get(f"/api/trace/{SESSION_ID}")["ETag"] != etag
    assert api.get(URL)["ETag"] == etag  # nothing written: the same


def test_a_matching_if_none_match_is_a_304_without_a_body(api, session):
    etag = api.get(URL)["ETag"]

    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):  # weak comparison and lists, as RFC 9110 asks
        response = api.get(URL, HTTP_IF_NONE_MATCH=header)
        assert (response.status_code, response.content, response["ETag"]) == (304, b"", etag), header
    for header in ('"other"', '"session.1.1.0000000000000000"', etag.replace("session.", "trace.")):
        assert api.get(URL, HTTP_IF_NONE_MATCH=header).status_code == 200, header


def test_a_vote_and_a_re_ingest_give_a_new_etag(api, session):
    first = api.get(URL)["ETag"]

    vote = api.post("/api/feedback", {"sessionId": SESSION_ID, "feedback": "not_useful"}, format="json")
    assert vote.status_code == 200, vote.content
    after_vote = api.get(URL, HTTP_IF_NONE_MATCH=first)
    assert after_vote.status_code == 200 and after_vote.json()["feedback"] == "not_useful"
    assert after_vote["ETag"] != first

    replaced = api.post("/api/sessions", chat_payload(sessionId=SESSION_ID, answer="另一个答案"), format="json")
    assert replaced.status_code == 200, replaced.content
    after_ingest = api.get(URL, HTTP_IF_NONE_MATCH=after_vote["ETag"])
    assert after_ingest.status_code == 200 and after_ingest.json()["answer"] == "另一个答案"
    assert after_ingest["ETag"] not in {first, after_vote["ETag"]}
    assert api.get(URL, HTTP_IF_NONE_MATCH=after_ingest["ETag"]).status_code == 304


def test_a_renamed_project_gives_a_new_etag(api, project, session):
    etag = api.get(URL)["ETag"]

    project.slug = "acme-support"
    project.save()

    response = api.get(URL, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and response.json()["project"] == "acme-support"


def test_a_304_costs_one_query_and_a_body_no_more_than_before(api, session, django_assert_num_queries):
    etag = api.get(URL)["ETag"]

    with django_assert_num_queries(1):  # the session and its project, among the caller's
        assert api.get(URL, HTTP_IF_NONE_MATCH=etag).status_code == 304
    with django_assert_num_queries(4):  # and its steps, its invocations, their refs
        assert api.get(URL).status_code == 200


def test_the_schema_documents_the_etag_and_the_304_as_the_traces():
    paths = contract.openapi_schema()["paths"]
    for path in ("/api/sessions/{session_id}", "/api/trace/{session_id}"):
        operation = paths[path]["get"]
        assert "If-None-Match" in {p["name"] for p in operation["parameters"] if p["in"] == "header"}, path
        responses = operation["responses"]
        assert "content" not in responses["304"], path  # a 304 has no body
        for status in ("200", "304"):
            assert responses[status]["headers"]["ETag"]["schema"] == {"type": "string"}, (path, status)


def test_feedback_set_by_an_imported_decision_gives_a_new_etag(api, project, session):
    from backoffice.decisions import decision_import_lines

    etag = api.get(URL)["ETag"]
    record = {
        "kind": "session_state",
        "project": project.slug,
        "sessionId": SESSION_ID,
        "feedback": "useful",
        "reviewedAt": None,
        "reviewJudgement": None,
    }

    report = decision_import_lines(lines=[json.dumps(record).encode()])

    assert not report.errors and report.stored["session_state"] == 1
    response = api.get(URL, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and response.json()["feedback"] == "useful"
