"""Request bodies defined by msgspec Structs: refused in the API's envelope, documented as their schema."""

from typing import Annotated

import msgspec
import pytest
from msgspec import Meta
from rest_framework.exceptions import ValidationError

from core.api.fields import NOT_BLANK_PATTERN
from core.api.structs import struct_from_body
from diagnosis.models import Feedback
from tests import contract


class Item(msgspec.Struct, rename="camel"):
    item_name: Annotated[str, Meta(min_length=1, max_length=5)]
    feedback: Feedback


class Body(msgspec.Struct, rename="camel"):
    items: list[Item]


def refused(data) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as refusal:
        struct_from_body(data, Body)
    return {name: [str(message) for message in messages] for name, messages in refusal.value.detail.items()}


def test_a_valid_body_becomes_the_struct():
    body = struct_from_body({"items": [{"itemName": "a", "feedback": "useful"}], "unknown": 1}, Body)

    assert body == Body(items=[Item(item_name="a", feedback=Feedback.USEFUL)])


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({}, {"items": ["This field is required."]}),
        ({"items": [{"itemName": "a"}]}, {"items.0.feedback": ["This field is required."]}),
        (
            {"items": [{"itemName": "a", "feedback": "meh"}]},
            {"items.0.feedback": ["'meh' is not one of: useful, not_useful."]},
        ),
        (
            {"items": [{"itemName": "abcdef", "feedback": "useful"}]},
            {"items.0.itemName": ["Ensure this field has no more than 5 characters."]},
        ),
        ({"items": [{"itemName": "", "feedback": "useful"}]}, {"items.0.itemName": ["This field may not be blank."]}),
        ({"items": [{"itemName": 7, "feedback": "useful"}]}, {"items.0.itemName": ["Expected `str`, got `int`."]}),
        (["items"], {"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]}),
    ],
)
def test_a_refused_body_names_the_field_by_its_json_path(data, fields):
    assert refused(data) == fields


@pytest.mark.django_db
def test_the_feedback_body_keeps_its_component_and_the_choices_their_enum():
    component = contract.openapi_schema()["components"]["schemas"]["FeedbackInputRequest"]

    assert component["required"] == ["sessionId", "feedback"]
    assert component["properties"]["feedback"] == {"$ref": "#/components/schemas/FeedbackEnum"}
    assert component["properties"]["sessionId"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 128,
        "pattern": r"^\S+$",
    }


class Form(msgspec.Struct, kw_only=True, rename="camel"):
    name: Annotated[str, Meta(min_length=1, pattern=NOT_BLANK_PATTERN)]
    items: Annotated[list[Item], Meta(max_length=2)] = []
    note: str | None = None


def refused_form(data) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as refusal:
        struct_from_body(data, Form, every_field=True)
    return {name: [str(message) for message in messages] for name, messages in refusal.value.detail.items()}


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        (
            {"name": " \t", "items": [{"itemName": "a", "feedback": "useful"}] * 3},
            {"name": ["This field may not be blank."], "items": ["Ensure this field has no more than 2 elements."]},
        ),
        (
            {"items": [{"itemName": "a", "feedback": "meh"}], "note": 5},
            {
                "name": ["This field is required."],
                "items.0.feedback": ["'meh' is not one of: useful, not_useful."],
                "note": ["Expected `str | null`, got `int`."],
            },
        ),
        ({"name": None}, {"name": ["This field may not be null."]}),
    ],
)
def test_every_field_names_each_invalid_top_level_field_as_a_serializer_did(data, fields):
    assert refused_form(data) == fields
