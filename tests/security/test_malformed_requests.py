"""Malformed requests get a 4xx in the API's own envelope, never a 500, on both databases.

Each case is one an attacker tried (issue 12, section 1): values no column can store inside
free-form JSON, integers past the column's range, non-finite numbers, deep nesting, NUL in URLs,
out-of-range time-zone offsets, crafted cursors. Nothing of a refused request is stored.
"""

import base64
import json
from urllib.parse import urlencode

import pytest
from django.db import connection

from diagnosis.models import DiagnosisSession, DiagnosisStep
from evolution.models import VerificationLog
from tests.factories import chat_payload, session_ingest
from tests.feedback.helpers import post_json

pytestmark = pytest.mark.django_db

INT_COLUMN_MAX = 2**31 - 1  # PositiveIntegerField: PostgreSQL `integer` with a CHECK >= 0


def _error_fields(response) -> dict:
    assert response["Content-Type"] == "application/json", response.content[:200]
    body = response.json()
    assert set(body) == {"error"}, body
    return body["error"].get("fields", {})


def _with(path: str, value):
    """A valid chat payload, with an alert and an active alert, and `value` put at the dotted
    `path` (list indexes as numbers)."""
    payload = chat_payload(
        alert={"name": "HighErrorRate", "labels": {}}, activeAlerts=[{"name": "DiskFull", "labels": {}}]
    )
    *parents, last = path.split(".")
    node = payload
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[last] = value
    return payload


def _raw_post(client, url: str, text: str):
    return client.post(url, data=text.encode(), content_type="application/json")


UNSTORABLE_TEXT = {"nul": "a\u0000b", "lone surrogate": "a\ud800b"}
FREE_FORM_FIELDS = [
    "executorOutput.finalAnswer",
    "alert.labels.team",
    "steps.0.detail.note",
    "toolInvocations.0.arguments.q",
    "toolInvocations.0.output",
    "selfEvaluation.note",
    "activeAlerts.0.labels.team",
]


def _dumps(payload) -> str:
    # json.dumps escapes NUL and lone surrogates (ensure_ascii), as any client's encoder does.
    return json.dumps(payload)


@pytest.mark.parametrize("kind", sorted(UNSTORABLE_TEXT))
@pytest.mark.parametrize("field", FREE_FORM_FIELDS)
def test_unstorable_text_in_free_form_json_is_refused_naming_the_field(api, project, field, kind):
    payload = _with(field, UNSTORABLE_TEXT[kind])

    response = _raw_post(api, "/api/sessions", _dumps(payload))

    assert response.status_code == 400, response.content[:300]
    assert list(_error_fields(response)) == [field]
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize("kind", sorted(UNSTORABLE_TEXT))
def test_unstorable_text_in_an_object_key_names_the_object(api, project, kind):
    payload = chat_payload()
    payload["executorOutput"][f"k{UNSTORABLE_TEXT[kind]}"] = 1

    response = _raw_post(api, "/api/sessions", _dumps(payload))

    assert response.status_code == 400
    assert list(_error_fields(response)) == ["executorOutput"]
    assert not DiagnosisSession.objects.exists()


def test_a_valid_surrogate_pair_is_stored(api, project):
    payload = _with("toolInvocations.0.arguments.q", "磁盘 \U0001f4be full")

    response = _raw_post(api, "/api/sessions", _dumps(payload))

    assert response.status_code == 201, response.content
    stored = DiagnosisSession.objects.get().invocations.get()
    assert stored.arguments["q"] == "磁盘 \U0001f4be full"


@pytest.mark.parametrize(
    "field", ["steps.0.index", "toolInvocations.0.stepIndex"], ids=["step index", "invocation step index"]
)
def test_integers_past_the_columns_range_are_refused(api, project, field):
    payload = chat_payload()
    payload["steps"][1]["index"] = INT_COLUMN_MAX + 1
    payload["toolInvocations"][0]["stepIndex"] = INT_COLUMN_MAX + 1
    if field == "steps.0.index":
        payload["steps"] = [{"index": INT_COLUMN_MAX + 1, "name": "plan", "status": "SUCCEEDED"}]
        payload["toolInvocations"][0]["stepIndex"] = None
    else:
        payload["steps"] = []

    response = post_json(api, "/api/sessions", payload)

    assert response.status_code == 400, response.content
    assert list(_error_fields(response)) == [field]
    assert not DiagnosisSession.objects.exists()


def test_the_largest_index_the_column_holds_is_stored(api, project):
    payload = chat_payload()
    payload["steps"] = [{"index": INT_COLUMN_MAX, "name": "plan", "status": "SUCCEEDED"}]
    payload["toolInvocations"][0]["stepIndex"] = INT_COLUMN_MAX

    response = post_json(api, "/api/sessions", payload)

    assert response.status_code == 201, response.content
    assert DiagnosisStep.objects.get().index == INT_COLUMN_MAX


@pytest.mark.parametrize(
    "field",
    ["executorOutput.score", "selfEvaluation.evidence_score", "toolInvocations.0.output", "steps.0.detail.load"],
)
@pytest.mark.parametrize("number", ["1e400", "-1e400"])
def test_numbers_that_overflow_to_infinity_are_refused_anywhere(api, project, field, number):
    marker = "__NUMBER__"
    text = _dumps(_with(field, marker)).replace(f'"{marker}"', number)

    response = _raw_post(api, "/api/sessions", text)

    assert response.status_code == 400, response.content
    assert list(_error_fields(response)) == [field]
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_number_constants_are_refused(api, project, constant):
    text = _dumps(_with("executorOutput.score", "__N__")).replace('"__N__"', constant)

    response = _raw_post(api, "/api/sessions", text)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_evolution_feedback_satisfaction_of_1e400_is_refused(api):
    body = '{"query": "q", "oldResponse": "a", "newResponse": "b", "userFeedback": {"satisfaction": 1e400}}'

    response = _raw_post(api, "/api/evolution/verify", body)

    assert response.status_code == 400
    assert list(_error_fields(response)) == ["userFeedback.satisfaction"]
    assert not VerificationLog.objects.exists()


DEEP = 10_000
NESTED_BODIES = {
    "/api/sessions": lambda: _dumps(chat_payload()).replace('"detail": {}', '"detail": ' + "[" * DEEP + "]" * DEEP, 1),
    "/api/evolution/verify": lambda: (
        '{"query": "q", "oldResponse": "a", "newResponse": "b", "x": ' + "[" * DEEP + "]" * DEEP + "}"
    ),
    "/api/sessions/s-20261129-0001/feedback-token": lambda: '{"endUserId": ' + "[" * DEEP + "]" * DEEP + "}",
}


@pytest.mark.parametrize("url", sorted(NESTED_BODIES))
def test_json_nested_ten_thousand_levels_deep_is_refused(api, project, url):
    session_ingest(project, chat_payload()) if "feedback-token" in url else None
    count = DiagnosisSession.objects.count()

    response = _raw_post(api, url, NESTED_BODIES[url]())

    assert response.status_code == 400, response.content[:300]
    assert "levels deep" in json.dumps(response.json())
    assert DiagnosisSession.objects.count() == count


def test_deep_json_on_feedback_answers_in_the_seed_envelope(api, project):
    session_ingest(project, chat_payload())
    body = '{"sessionId": "s-20261129-0001", "feedback": "useful", "x": ' + "[" * DEEP + "]" * DEEP + "}"

    response = _raw_post(api, "/api/feedback", body)

    assert response.status_code == 400
    assert response.json()["success"] is False
    assert "levels deep" in response.json()["message"]


def test_json_nested_past_the_depth_bound_names_where(api, project, settings):
    settings.SELFEVAL_MAX_JSON_DEPTH = 8
    nested: dict = {}
    node = nested
    for _ in range(10):
        node["n"] = {}
        node = node["n"]

    response = post_json(api, "/api/sessions", _with("executorOutput.deep", nested))

    assert response.status_code == 400
    [field] = _error_fields(response)
    assert field.startswith("executorOutput.deep.n")
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize(
    "path",
    [
        "/api/sessions/%00",
        "/api/trace/%00",
        "/api/trace/x?project=%00",
        "/api/sessions?project=%00",
        "/api/sessions/s-1?project=%00",
        "/api/cases?q=%00",
    ],
)
def test_nul_in_a_url_path_or_query_is_a_400_in_the_envelope(api, project, path):
    response = api.get(path)

    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["code"] == "invalid"


def test_nul_in_the_feedback_token_url_is_a_400(api, project):
    response = post_json(api, "/api/sessions/%00/feedback-token", {"endUserId": "u-1"})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_a_time_zone_offset_of_almost_a_day_filters_by_the_instant_it_names(api, project):
    session_ingest(project, chat_payload(createdAt="2026-01-01T12:00:00Z"))
    # 2026-01-02T11:59+23:59 is 2026-01-01T12:00Z: the session is at the bound, not after it.
    params = {"createdAfter": "2026-01-02T11:59:00+23:59"}

    response = api.get("/api/sessions", params)

    assert response.status_code == 200, response.content
    assert [row["sessionId"] for row in response.json()["results"]] == ["s-20261129-0001"]
    assert api.get("/api/sessions", {"createdAfter": "2026-01-02T11:59:01+23:59"}).json()["results"] == []


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2026-01-01T00:00+24:00"])
def test_a_date_filter_outside_the_representable_range_is_a_400(api, project, value):
    response = api.get("/api/sessions", {"createdBefore": value})

    assert response.status_code == 400, response.content
    assert list(_error_fields(response)) == ["createdBefore"]


def _cursor(position: str) -> str:
    return base64.b64encode(urlencode({"p": position}).encode()).decode()


@pytest.mark.parametrize("position", ["notadate", "\u0000", "99999-01-01T00:00:00+00:00", "0001-01-01T00:00:00+01:00"])
@pytest.mark.parametrize("url", ["/api/sessions", "/api/cases"])
def test_a_crafted_cursor_is_refused_as_invalid(api, project, url, position):
    response = api.get(url, {"cursor": _cursor(position)})

    assert response.status_code == 404, response.content
    assert response.json()["error"] == {"code": "not_found", "message": "Invalid cursor"}


def test_a_real_cursor_still_pages(api, project):
    for number in range(3):
        session_ingest(project, chat_payload(sessionId=f"s-{number}"))

    first = api.get("/api/sessions", {"pageSize": 2}).json()
    second = api.get(first["next"]).json()

    assert len(first["results"]) == 2 and len(second["results"]) == 1


@pytest.mark.parametrize("path", ["/api/nothing-here", "/api/sessions/", "/api/trace", "/api/sessions/s-1/unknown"])
def test_unknown_api_routes_answer_a_json_404(api, path):
    response = api.get(path)

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "options"])
def test_any_method_on_an_unknown_api_address_is_the_json_404_not_the_csrf_page(client_for, api_key, method):
    # A browser-like client that enforces CSRF, as Django's middleware does for real requests.
    client = client_for(api_key)
    client.handler.enforce_csrf_checks = True

    response = getattr(client, method)(
        "/api/nothing/v1/traces", data=b"\x0a\x00", content_type="application/x-protobuf"
    )

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("url", "unknown", "hint"),
    [
        ("/api/sessions?verifier_verdict=PASS", "verifier_verdict", "verifierVerdict"),
        ("/api/sessions?verifierVerdict=PASS&mod=chat", "mod", "mode"),
        ("/api/cases?statuss=approved", "statuss", "status"),
    ],
)
def test_an_unknown_or_misspelt_list_filter_is_a_400_naming_it(api, project, url, unknown, hint):
    session_ingest(project, chat_payload(sessionId="s-1"))

    response = api.get(url)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unknown_parameter" and unknown in error["message"]
    assert f"Did you mean {hint}?" in error["fields"][unknown][0]


def test_the_list_parameters_a_list_reads_are_not_unknown(api, project):
    for number in range(3):
        session_ingest(project, chat_payload(sessionId=f"s-{number}"))

    first = api.get("/api/sessions", {"pageSize": 2, "mode": "chat", "format": "json"})
    second = api.get("/api/sessions", {"cursor": first.json()["cursor"], "pageSize": 2, "mode": "chat"})
    cases = api.get("/api/cases", {"q": "x", "faultCategory": "NETWORK", "status": "approved", "pageSize": 5})

    assert [first.status_code, second.status_code, cases.status_code] == [200, 200, 200]
    assert len(second.json()["results"]) == 1 and second.json()["cursor"] is None


def test_an_unexpected_error_under_api_answers_the_envelope_not_an_html_page(api, monkeypatch, settings):
    settings.DEBUG = False
    monkeypatch.setattr("diagnosis.api.session_upsert", lambda **kwargs: 1 / 0)
    api.raise_request_exception = False

    response = post_json(api, "/api/sessions", chat_payload())

    assert response.status_code == 500
    assert response.json() == {"error": {"code": "server_error", "message": "Server error"}}


def test_postgres_and_sqlite_store_the_same_accepted_text(api, project):
    """What passes the checks is what both databases store unchanged (here: control characters
    other than NUL, and text outside the BMP)."""
    text = "tab\there \x01 \U0001f600 中文"

    response = post_json(api, "/api/sessions", _with("toolInvocations.0.output", text))

    assert response.status_code == 201, (connection.vendor, response.content)
    assert DiagnosisSession.objects.get().invocations.get().output == text
