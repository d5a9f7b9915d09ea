"""The OpenAPI contract as the test suite checks it: every API response against the generated schema.

The schema is generated once per run (drf-spectacular, the same generator as `/api/schema/`, OpenAPI
3.1) and every response is validated by openapi-core's strict response validator, as a client's
validator would read it: a `null` is valid only where the schema admits it (`"type": [..., "null"]`
or a `{"type": "null"}` alternative). `response_mismatch` names what is wrong with one response: a
status the operation does not document, a media type it does not document, or a body its schema
refuses. Requests no operation describes (an unknown address, a method the path does not serve)
are not checked: the schema promises nothing about them.
"""

import functools
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from openapi_core import OpenAPI
from openapi_core.exceptions import OpenAPIError
from openapi_core.testing import MockRequest, MockResponse

HOST_URL = "http://testserver"


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    responses: dict[str, Any]


# drf-spectacular's generator is not thread-safe, and the concurrency tests' first requests come
# from several threads at once: the schema and its operations are built once, under this lock.
_BUILDING = threading.Lock()


def openapi_schema() -> dict[str, Any]:
    with _BUILDING:
        return _openapi_schema()


@functools.cache
def _openapi_schema() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    # Through JSON, as /api/schema/ serves it (lazy translations and enums become plain values).
    from drf_spectacular.renderers import OpenApiJsonRenderer

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema, renderer_context={}))


def _openapi() -> OpenAPI:
    with _BUILDING:
        return _openapi_built()


@functools.cache
def _openapi_built() -> OpenAPI:
    return OpenAPI.from_dict(_openapi_schema())


def _operations() -> list[tuple[re.Pattern[str], Operation]]:
    with _BUILDING:
        return _operations_built()


@functools.cache
def _operations_built() -> list[tuple[re.Pattern[str], Operation]]:
    found = []
    for template, item in _openapi_schema()["paths"].items():
        parameters = {
            p["name"]: p.get("schema", {}).get("pattern", "[^/]+")
            for operation in item.values()
            if isinstance(operation, dict)
            for p in operation.get("parameters", [])
            if p.get("in") == "path"
        }
        regex = re.escape(template)
        for name, pattern in parameters.items():
            regex = regex.replace(re.escape("{" + name + "}"), f"(?:{pattern.strip('^$')})")
        for method, operation in item.items():
            if method in ("get", "put", "post", "patch", "delete"):
                found.append((re.compile(f"^{regex}$"), Operation(method, template, operation["responses"])))
    return found


def operation_for(method: str, path: str) -> Operation | None:
    """The operation serving `method` at `path`. A literal path wins over a templated one, as the
    router routes it: `/api/sessions/batch` is not the session "batch"."""
    matching = [operation for regex, operation in _operations() if regex.match(path)]
    if not matching:
        return None
    specific = min(operation.template.count("{") for operation in matching)
    return next((op for op in matching if op.template.count("{") == specific and op.method == method.lower()), None)


def response_mismatch(
    method: str, path: str, status_code: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
) -> str | None:
    """Why this response breaks the schema, or None when it keeps it (or no operation covers it)."""
    operation = operation_for(method, path)
    if operation is None:
        return None
    status = str(status_code)
    if status not in operation.responses:
        return f"{method} {operation.template}: status {status} is not documented"
    content = operation.responses[status].get("content")
    media_type = (content_type or "").split(";")[0].strip()
    if not content:
        return None if not body else f"{method} {operation.template} {status}: a body where none is documented"
    if media_type not in content:
        return f"{method} {operation.template} {status}: media type {media_type!r} is not documented"
    if media_type != "application/json":
        return None  # binary protobuf: the schema says only "bytes"
    request = MockRequest(HOST_URL, method.lower(), path, path_pattern=operation.template)
    response = MockResponse(body, status_code=status_code, content_type=media_type, headers=headers)
    try:
        _openapi().validate_response(request, response)
    except OpenAPIError as error:
        return f"{method} {operation.template} {status}: {described(error)}"
    return None


def described(error: Exception) -> str:
    """The schema errors under an openapi-core error, each with where in the body it is."""
    cause = error.__cause__ or error
    schema_errors = getattr(cause, "schema_errors", None) or []
    if not schema_errors:
        return f"{type(cause).__name__}: {str(cause)[:300]}"
    ordered = sorted(schema_errors, key=lambda e: list(map(str, e.absolute_path)))
    return "; ".join(f"at {'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in ordered[:5])
