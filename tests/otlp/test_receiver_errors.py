"""What POST /v1/traces says when it refuses a request: what is wrong in the request, by its place in
the body, never the parser's internals (protobuf type names, Python's recursion limit), in the
encoding the client speaks."""

import pytest

from otlp.models import BufferedSpan, BufferedTrace
from tests.otlp.conftest import JSON, PROTOBUF, URL, export, rpc_status

pytestmark = pytest.mark.django_db

SPAN = "resourceSpans.0.scopeSpans.0.spans.0"
INTERNALS = ("opentelemetry.proto", "recursion", "ExportTraceServiceRequest", "Failed to parse", "unhashable", "int()")


def _span(fields: str) -> bytes:
    return f'{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{{{fields}}}]}}]}}]}}'.encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (_span('"name": 5'), f"{SPAN}.name: expected a string"),
        (
            _span('"kind": {}'),
            f"{SPAN}.kind: expected one of SPAN_KIND_UNSPECIFIED, SPAN_KIND_INTERNAL, SPAN_KIND_SERVER, "
            "SPAN_KIND_CLIENT, SPAN_KIND_PRODUCER, SPAN_KIND_CONSUMER, or its number",
        ),
        (
            _span('"startTimeUnixNano": "soon"'),
            f"{SPAN}.startTimeUnixNano: expected a non-negative integer (a number, or a string of digits)",
        ),
        (_span('"droppedAttributesCount": -1'), f"{SPAN}.droppedAttributesCount: expected a non-negative integer"),
        (_span('"attributes": {"a": 1}'), f"{SPAN}.attributes: expected an array"),
        (
            _span('"attributes": [{"key": "a", "value": {"stringValue": "x", "intValue": "1"}}]'),
            f"{SPAN}.attributes.0.value: sets stringValue and intValue, of which one only may be set",
        ),
        (_span('"traceId": "xyz"'), f"{SPAN}.traceId: 'xyz' is not a hex string"),
        (b'{"resourceSpans": [5]}', "resourceSpans.0: expected an object"),
        (b'{"resourceSpans": "many"}', "resourceSpans: expected an array"),
        (b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "Nested more than 64 levels deep"),
        (_span('"name": "\\ud800"'), f"{SPAN}.name: Text contains a lone surrogate"),
        (b"\xff\xfe{}", "it is not UTF-8 text (byte 0)"),
        (b'{"resourceSpans": [}', "it is not JSON (Expecting value: line 1 column 20 (char 19))"),
    ],
    ids=[
        "string",
        "enum",
        "integer",
        "unsigned",
        "array",
        "oneof",
        "hex id",
        "object",
        "top-level array",
        "deep nesting",
        "lone surrogate",
        "not utf-8",
        "not json",
    ],
)
def test_an_otlp_json_body_that_does_not_fit_is_a_400_naming_the_place(api, body, message):
    response = export(api, body, content_type=JSON)

    assert response.status_code == 400
    assert response["Content-Type"] == JSON
    said = response.json()["message"]
    assert said.startswith("The body is not an OTLP/JSON trace export: ")
    assert message in said
    assert not any(internal in said for internal in INTERNALS), said
    assert not BufferedTrace.objects.exists()


def test_nul_in_otlp_json_refuses_the_span_not_the_request(api):
    """As for protobuf bodies, which may carry NUL too: that span is refused (a partial success),
    the request's other spans are kept."""
    trace_id, times = (
        "5b8efff798038103d269b633813fc60c",
        ('"startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000"'),
    )
    kept = f'{{"traceId": "{trace_id}", "spanId": "eee19b7ec3c1b174", "parentSpanId": "00f067aa0ba902b7", {times}, "name": "tool"}}'
    refused = f'{{"traceId": "{trace_id}", "spanId": "eee19b7ec3c1b175", "parentSpanId": "00f067aa0ba902b7", {times}, "name": "a\\u0000b"}}'
    body = f'{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{kept}, {refused}]}}]}}]}}'.encode()

    response = export(api, body, content_type=JSON)

    assert response.status_code == 200, response.content
    assert response.json()["partialSuccess"]["rejectedSpans"] == "1"
    assert "NUL" in response.json()["partialSuccess"]["errorMessage"]
    assert BufferedSpan.objects.count() == 1


@pytest.mark.parametrize("body", [b"\x0a\x05\xff\xff", b"\xff" * 50])
def test_a_corrupt_protobuf_body_says_so_without_type_names(api, body):
    response = export(api, body, content_type=PROTOBUF)

    assert response.status_code == 400
    message = rpc_status(response).message
    assert message == "The body is not a protobuf OTLP trace export: its wire format is corrupt or truncated."


def test_json_sent_as_protobuf_is_told_to_say_json(api):
    response = export(api, b'{"resourceSpans": []}', content_type=PROTOBUF)

    assert response.status_code == 400
    assert rpc_status(response).message.endswith("It looks like JSON: send it as application/json.")


@pytest.mark.parametrize(
    ("content_type", "accept", "answered_in"),
    [
        ("", "", JSON),
        ("", "*/*", JSON),
        ("text/plain", "application/json", JSON),
        ("", "application/x-protobuf", PROTOBUF),
        ("text/plain", "text/html, application/protobuf;q=0.9", PROTOBUF),
    ],
)
def test_a_content_type_error_answers_as_the_client_reads(api, content_type, accept, answered_in):
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    response = api.generic("POST", URL, b"{}", content_type, **headers)

    assert response.status_code == 415
    assert response["Content-Type"] == answered_in
    message = response.json()["message"] if answered_in == JSON else rpc_status(response).message
    assert message.startswith("Unsupported Content-Type")
