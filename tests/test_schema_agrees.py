"""The schema says what the server does, both ways: what it documents as valid is taken, what it
refuses the schema refuses too. The drift schemathesis found (issue 22), each closed at its source:
page sizes, score bounds, empty filter values, Content-Encoding as a parameter, the OTLP body,
batch items, the Idempotency-Key, the executor output."""

import json
import re

import pytest

from diagnosis.models import DiagnosisSession
from tests import contract
from tests.factories import chat_payload, session_ingest

pytestmark = pytest.mark.django_db


def _parameter(path: str, method: str, name: str) -> dict:
    operation = contract.openapi_schema()["paths"][path][method]
    return next(parameter for parameter in operation.get("parameters", []) if parameter["name"] == name)


@pytest.mark.parametrize("path", ["/api/sessions", "/api/cases"])
def test_the_page_size_is_an_integer_from_1_to_200_in_the_schema_and_the_answers(api, project, path):
    session_ingest(project, chat_payload())

    assert _parameter(path, "get", "pageSize")["schema"] == {"type": "integer", "minimum": 1, "maximum": 200}
    for refused in ("null", "", "0", "201", "1.5", "ten"):
        response = api.get(path, {"pageSize": refused})
        assert response.status_code == 400, refused
        assert list(response.json()["error"]["fields"]) == ["pageSize"]
    assert api.get(path, {"pageSize": "200"}).status_code == 200
    assert api.get(path, {"pageSize": "1"}).status_code == 200


@pytest.mark.parametrize("name", ["evidenceScoreMin", "evidenceScoreMax"])
def test_the_evidence_score_bounds_are_in_the_schema_and_the_answers(api, project, name):
    assert _parameter("/api/sessions", "get", name)["schema"] == {"type": "integer", "minimum": 0, "maximum": 100}
    for refused in ("-1", "101", "40.5"):
        assert api.get("/api/sessions", {name: refused}).status_code == 400, refused
    assert api.get("/api/sessions", {name: "0"}).status_code == 200


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/api/sessions", "status"),
        ("/api/sessions", "feedback"),
        ("/api/sessions", "evidenceScoreMax"),
        ("/api/sessions", "createdBefore"),
        ("/api/cases", "status"),
        ("/api/cases", "faultCategory"),
    ],
)
def test_an_empty_enum_number_or_date_is_a_400_not_a_filter_left_out(api, project, path, name):
    response = api.get(path, {name: ""})

    assert response.status_code == 400
    assert name in response.json()["error"]["fields"]


@pytest.mark.parametrize(("path", "name"), [("/api/sessions", "project"), ("/api/cases", "q")])
def test_empty_free_text_is_taken(api, project, path, name):
    assert api.get(path, {name: ""}).status_code == 200


def test_content_encoding_is_no_operation_parameter_but_the_api_says_it():
    schema = contract.openapi_schema()

    names = {
        parameter["name"]
        for item in schema["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for parameter in operation.get("parameters", [])
    }
    assert "Content-Encoding" not in names
    assert "`Content-Encoding: gzip` (or `deflate`)" in schema["info"]["description"]


def test_every_write_operation_requires_its_body():
    for path, item in contract.openapi_schema()["paths"].items():
        for method in ("post", "put"):
            if method in item:
                assert item[method]["requestBody"]["required"] is True, (method, path)


def test_a_batch_item_that_is_not_an_object_refuses_the_batch(api, project):
    assert _batch_items_schema()["type"] == "object"

    response = api.post(
        "/api/sessions/batch", data=json.dumps([chat_payload(sessionId="s-1"), 5]), content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"1": ["Expected a session object."]}
    assert not DiagnosisSession.objects.exists()


def _batch_items_schema() -> dict:
    body = contract.openapi_schema()["paths"]["/api/sessions/batch"]["post"]["requestBody"]
    return body["content"]["application/json"]["schema"]["items"]


IDEMPOTENCY_KEYS = [
    "k",
    "8e03978e-40d5-43e8-bc93-6894a57f9324",
    "a b",
    'a"',
    "k" * 255,
    "k" * 256,
    '"quoted"',
    '"with \\"escaped\\" quotes"',
    '"' + "q" * 255 + '"',
    '"' + "q" * 256 + '"',
    "",
    "   ",
    '""',
    '"',
    '"unterminated',
    '"bad \\escape"',
    "  padded  ",
    "tab\there",
]


@pytest.mark.parametrize("key", IDEMPOTENCY_KEYS)
def test_the_idempotency_key_pattern_is_the_servers_rule(api, project, key):
    session_ingest(project, chat_payload(sessionId="s-1"))
    pattern = _parameter("/api/feedback", "post", "Idempotency-Key")["schema"]["pattern"]

    response = api.post(
        "/api/feedback",
        data=json.dumps({"sessionId": "s-1", "feedback": "useful"}),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=key,
    )

    assert (re.fullmatch(pattern, key) is not None) == (response.status_code == 200), (key, response.content)


@pytest.mark.parametrize(
    ("field", "text"),
    [("query", "\x1e"), ("query", "\x1c\x1f"), ("query", "\x85"), ("query", " \t"), ("newResponse", "\u3000")],
)
def test_text_of_whitespace_only_is_refused_as_the_schema_says(api, field, text):
    request = contract.openapi_schema()["components"]["schemas"]["VerifyRequestRequest"]["properties"]
    body = {"query": "q", "oldResponse": "", "newResponse": "n", field: text}

    response = api.post("/api/evolution/verify", data=json.dumps(body), content_type="application/json")

    assert re.search(request[field]["pattern"], text) is None
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {field: ["This field may not be blank."]}
