"""The OpenAPI contract as the test suite checks it: every API response against the generated schema.

The schema is generated once per run (drf-spectacular, the same generator as `/api/schema/`),
turned into JSON Schema (OpenAPI 3.0's `nullable` becomes a `null` alternative) and compiled per
response on first use. `response_mismatch` names what is wrong with one response: a status the
operation does not document, a media type it does not document, or a body its schema refuses.
Requests no operation describes (an unknown address, a method the path does not serve) are not
checked: the schema promises nothing about them.
"""

import functools
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012


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


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects as JSON Schema 2020-12: `nullable: true` admits null."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _json_schema(value) for key, value in node.items() if key not in ("nullable", "example")}
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@functools.cache
def _registry() -> Registry:
    document = {"components": _json_schema(openapi_schema()["components"])}
    return Registry().with_resource("urn:selfeval", Resource(contents=document, specification=DRAFT202012))


@functools.cache
def _validator(template: str, method: str, status: str, media_type: str) -> jsonschema.Draft202012Validator | None:
    operation = next(op for _, op in _operations() if op.template == template and op.method == method)
    schema = operation.responses[status]["content"][media_type]["schema"]
    rebased = json.loads(json.dumps(_json_schema(schema)).replace('"#/components/', '"urn:selfeval#/components/'))
    return jsonschema.Draft202012Validator(rebased, registry=_registry(), format_checker=FORMATS)


FORMATS = jsonschema.FormatChecker()


def response_mismatch(method: str, path: str, status_code: int, content_type: str, body: bytes) -> str | None:
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
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return f"{method} {operation.template} {status}: the body is not JSON"
    validator = _validator(operation.template, method.lower(), status, media_type)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    described = "; ".join(
        f"at {'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in errors[:5]
    )
    return f"{method} {operation.template} {status}: {described}"
