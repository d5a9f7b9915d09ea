"""The trace body (trace.body, plain values) and its documentation (trace.serializers) agree both ways.

tests/contract.py validates every answer against the schema, which catches a missing or mistyped
field; this catches the other way: a key the body has and the schema does not document."""

from typing import Any

import pytest

from tests import contract
from tests.factories import aiops_payload, chat_payload, feedback_of, session_ingest_evaluated

pytestmark = pytest.mark.django_db


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """The object schema a value has: through `$ref`, `allOf` and the non-null alternative of `oneOf`."""
    components = contract.openapi_schema()["components"]["schemas"]
    while True:
        if "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[1]]
        elif "allOf" in schema:
            schema = schema["allOf"][0]
        elif "oneOf" in schema or "anyOf" in schema:
            alternatives = [s for s in schema.get("oneOf", schema.get("anyOf")) if s.get("type") != "null"]
            if len(alternatives) != 1:
                return {}
            schema = alternatives[0]
        else:
            return schema


def _undocumented(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    """Every key of `value` (at any depth) its schema does not list, and every listed key it lacks."""
    schema = _resolve(schema)
    if isinstance(value, list) and "items" in schema:
        return [
            problem for i, item in enumerate(value) for problem in _undocumented(item, schema["items"], f"{path}.{i}")
        ]
    if not isinstance(value, dict) or "properties" not in schema:
        return []
    properties = schema["properties"]
    problems = [f"{path}.{key}: not documented" for key in value.keys() - properties.keys()]
    problems += [f"{path}.{key}: documented, not answered" for key in properties.keys() - value.keys()]
    for key in value.keys() & properties.keys():
        problems += _undocumented(value[key], properties[key], f"{path}.{key}")
    return problems


@pytest.mark.parametrize("payload", [chat_payload(conversationId="conv-1"), aiops_payload()], ids=["chat", "aiops"])
def test_every_key_of_the_trace_is_documented_and_every_documented_key_answered(api, project, payload):
    session = session_ingest_evaluated(project, payload)
    feedback_of(session, "useful")
    feedback_of(session, "not_useful")

    body = api.get(f"/api/trace/{session.session_id}").json()

    assert (
        body["views"]["user"]["case"] and body["views"]["user"]["badCase"] and body["selfEvaluation"]["ruleEvaluation"]
    )
    assert _undocumented(body, {"$ref": "#/components/schemas/Trace"}, "") == []
