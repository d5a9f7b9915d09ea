import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tests.otlp.sdk import Recorder

URL = "/v1/traces"
PROTOBUF = "application/x-protobuf"
JSON = "application/json"


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def export(client, body: bytes, *, content_type: str = PROTOBUF, **headers):
    return client.post(URL, data=body, content_type=content_type, **headers)


def answer(response) -> ExportTraceServiceResponse:
    assert response["Content-Type"] == PROTOBUF, response.content
    return ExportTraceServiceResponse.FromString(response.content)


def rpc_status(response) -> status_pb2.Status:
    assert response["Content-Type"] == PROTOBUF, response.content
    return status_pb2.Status.FromString(response.content)
