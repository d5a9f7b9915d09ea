"""The schema's promises, and the hook that holds every response of the suite to them (tests/contract.py)."""

import json
import re
import tomllib
from pathlib import Path

import pytest
from django.urls import URLResolver, get_resolver

from tests import contract
from tests.factories import chat_payload, session_ingest

pytestmark = pytest.mark.django_db


def operations() -> list[tuple[str, str, dict]]:
    return [
        (method, path, operation)
        for path, item in contract.openapi_schema()["paths"].items()
        if path.startswith("/api/") and not path.startswith("/api/public/otel/")  # OTLP answers: google.rpc.Status
        for method, operation in item.items()
        if method in ("get", "post", "put")
    ]


@pytest.mark.parametrize(("method", "path", "operation"), operations(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_operation_documents_the_errors_it_really_answers(method, path, operation):
    statuses = set(operation["responses"])

    assert {"400", "401", "403", "406", "429", "500", "503"} <= statuses
    if method in ("post", "put"):
        assert {"413", "415"} <= statuses
    for status in statuses - {"200", "201", "304"}:  # a 304 has no body (RFC 9110)
        schema = operation["responses"][status]["content"]["application/json"]["schema"]
        assert schema["$ref"].rsplit("/", 1)[1] in {"ErrorEnvelope", "FeedbackError"}


def test_every_answer_documents_its_rate_limit_headers_and_every_api_view_is_throttled():
    schema = contract.openapi_schema()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                shared = {
                    name: header["$ref"].rsplit("/", 1)[1]
                    for name, header in response["headers"].items()
                    if "$ref" in header
                }
                expected = {"RateLimit-Policy", "RateLimit"} | ({"Retry-After"} if status in {"429", "503"} else set())
                assert shared == {name: name for name in expected}, (method, path, status)
                # Beside them, an operation documents only its version of what it answers (the trace's ETag).
                assert set(response["headers"]) - set(shared) <= {"ETag"}, (method, path, status)
    assert schema["components"]["headers"]["Retry-After"]["schema"] == {"type": "integer", "minimum": 0}
    # The headers are documented on every operation because every API view counts its requests in a scope
    # (the schema's own views are not operations of it).
    views = {
        pattern.callback.cls
        for pattern in _api_patterns(get_resolver().url_patterns)
        if hasattr(pattern.callback, "cls")
    }
    unscoped = [
        view.__name__
        for view in views
        if not view.__module__.startswith("drf_spectacular.") and not hasattr(view, "throttle_scope")
    ]
    assert not unscoped


def _api_patterns(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _api_patterns(pattern.url_patterns)
        else:
            yield pattern


def test_executor_output_is_a_typed_component_with_the_settings_limits(settings):
    components = contract.openapi_schema()["components"]["schemas"]
    claim = components["ExecutorClaim"]

    assert set(components["ExecutorEvidenceV2"]["required"]) == {"version", "claims"}
    assert components["ExecutorEvidenceV2"]["properties"]["claims"]["maxItems"] == settings.SELFEVAL_MAX_CLAIMS
    assert claim["properties"]["evidence"]["maxItems"] == settings.SELFEVAL_MAX_CLAIM_EVIDENCE
    assert components["EvidenceBinding"]["required"] == ["refId"]
    ingest = components["SessionIngestRequest"]["properties"]["executorOutput"]
    # executor_evidence_v2, or any other object (stored as sent and evaluated INVALID, never refused), or null.
    assert ingest["anyOf"] == [
        {"$ref": "#/components/schemas/ExecutorEvidenceV2"},
        {"type": "object", "additionalProperties": {}},
        {"type": "null"},
    ]


def test_no_feedback_is_null_in_the_answers_and_the_schema(api, project):
    session_ingest(project, chat_payload(sessionId="s-1"))

    row = api.get("/api/sessions").json()["results"][0]
    feedback = contract.openapi_schema()["components"]["schemas"]["SessionSummary"]["properties"]["feedback"]

    assert row["feedback"] is None and row["verifierVerdict"] is None
    assert {"$ref": "#/components/schemas/FeedbackEnum"} in feedback["oneOf"]
    assert {"$ref": "#/components/schemas/NullEnum"} in feedback["oneOf"]


def test_the_hook_names_an_undocumented_status_and_a_body_the_schema_refuses(api, project):
    session_ingest(project, chat_payload(sessionId="s-1"))
    page = api.get("/api/sessions").json()
    page["results"][0]["feedback"] = ""  # what the API answered before "no feedback" was null
    body = json.dumps(page).encode()

    refused = contract.response_mismatch("GET", "/api/sessions", 200, "application/json", body)
    undocumented = contract.response_mismatch("GET", "/api/sessions", 418, "application/json", b"{}")

    assert "results.0.feedback" in refused
    assert undocumented == "GET /api/sessions: status 418 is not documented"
    assert contract.response_mismatch("GET", "/api/nowhere", 404, "application/json", b"{}") is None


def test_a_literal_path_is_not_read_as_a_template():
    assert contract.operation_for("POST", "/api/sessions/batch").template == "/api/sessions/batch"
    assert contract.operation_for("GET", "/api/sessions/batch") is None
    assert contract.operation_for("GET", "/api/sessions/s-1").template == "/api/sessions/{session_id}"


def test_an_accept_header_without_json_is_the_documented_406(api):
    response = api.get("/api/sessions", HTTP_ACCEPT="application/xml")

    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


def test_the_live_fuzzing_step_of_ci_runs_every_default_check():
    """Schemathesis runs all its checks unless told fewer: CI tells it none fewer (issue 22, point 7)."""
    root = Path(__file__).resolve().parent.parent
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    # The schemathesis command with its continuation lines.
    [command] = re.findall(r"\.venv/bin/schemathesis (?:.*\\\n)*.*", ci)
    config = tomllib.loads((root / ".ci" / "schemathesis.toml").read_text(encoding="utf-8"))
    check_sections = [config.get("checks", {})] + [operation.get("checks", {}) for operation in config["operations"]]

    assert not re.search(r"(\s-c\s|--checks|--exclude-checks)", command), command
    assert all(
        section.get("enabled", True)
        and all(check.get("enabled", True) for check in section.values() if isinstance(check, dict))
        for section in check_sections
    ), check_sections
