"""Request bodies defined once, as msgspec Structs: validated in microseconds, refused in the API's
error envelope, documented as their JSON Schema.

A DRF serializer builds and deep-copies its fields on every request; for a small body on a hot path
(the vote) that cost more than the body's whole check. A Struct is the body's one definition:
`struct_from_body` validates the parsed JSON with it (`msgspec.convert`, strict: no string becomes
a number) and raises DRF's ValidationError keyed by the field's JSON path (`sessionId`,
`toolInvocations.2.status`), so the exception handler answers in the same envelope as for a
serializer; `StructSchema` makes drf-spectacular take a Struct wherever it takes a serializer
(`extend_schema(request=FeedbackInput)` gives the component `FeedbackInputRequest`).

msgspec names the first problem only; the messages that have a DRF wording keep it ("This field is
required.", "'x' is not one of: a, b.").
"""

import re
from typing import Any

import msgspec
from django.db.models import Choices
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent, get_class, list_hash
from rest_framework.exceptions import ValidationError

_AT = re.compile(r"^(?P<problem>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")
_ENUM = re.compile(r"^Invalid enum value (?P<value>.+)$")
_LENGTH = re.compile(r"^Expected `str` of length (?P<bound>[<>]=) (?P<count>\d+)$")


def struct_from_body[T](data: Any, struct_type: type[T]) -> T:
    """`data` (a parsed JSON body) as `struct_type`; ValidationError({path: [message]}) otherwise."""
    if not isinstance(data, dict):
        raise ValidationError(
            {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {type(data).__name__}."]}
        )
    try:
        return msgspec.convert(data, struct_type)
    except msgspec.ValidationError as error:
        path, message = _problem(str(error), struct_type)
        raise ValidationError({path or "non_field_errors": [message]}) from None


def _problem(text: str, struct_type: type) -> tuple[str, str]:
    """(dotted path, message) of msgspec's error text."""
    found = _AT.match(text)
    problem, segments = found["problem"], _segments(found["path"] or "")
    if missing := _MISSING.match(problem):
        return _dotted([*segments, missing["name"]]), "This field is required."
    if enum := _ENUM.match(problem):
        values = _allowed(_type_at(msgspec.inspect.type_info(struct_type), segments))
        allowed = f": {', '.join(map(str, values))}" if values else " the allowed values"
        return _dotted(segments), f"{enum['value']} is not one of{allowed}."
    if length := _LENGTH.match(problem):
        count = int(length["count"])
        if length["bound"] == "<=":
            return _dotted(segments), f"Ensure this field has no more than {count} characters."
        if count == 1:
            return _dotted(segments), "This field may not be blank."
        return _dotted(segments), f"Ensure this field has at least {count} characters."
    return _dotted(segments), f"{problem}."


def _allowed(info: msgspec.inspect.Type | None) -> list[Any]:
    if isinstance(info, msgspec.inspect.EnumType):
        return [member.value for member in info.cls]
    return list(getattr(info, "values", ()))


def _segments(path: str) -> list[str | int]:
    return [int(index) if index else name for name, index in _SEGMENT.findall(path)]


def _dotted(segments: list[str | int]) -> str:
    return ".".join(map(str, segments))


def _type_at(info: msgspec.inspect.Type, segments: list[str | int]) -> msgspec.inspect.Type | None:
    """The msgspec type found at `segments` from `info`, or None when the path leaves the types."""
    for segment in segments:
        while isinstance(info, msgspec.inspect.Metadata):
            info = info.type
        if isinstance(info, msgspec.inspect.StructType) and isinstance(segment, str):
            info = next((field.type for field in info.fields if field.encode_name == segment), None)
        elif isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)):
            info = info.item_type
        elif isinstance(info, msgspec.inspect.DictType):
            info = info.value_type
        else:
            return None
    while isinstance(info, msgspec.inspect.Metadata):
        info = info.type
    return info


class StructSchema(OpenApiSerializerExtension):
    """A msgspec Struct in the schema: its JSON Schema 2020-12 (which OpenAPI 3.1 takes as it is),
    its nested Structs as components of their own. A field typed with a model's choices (a Django
    `Choices` enum) gets the enum component every serializer of those choices gets (FeedbackEnum)."""

    target_class = msgspec.Struct
    match_subclasses = True

    def get_name(self, auto_schema, direction) -> str:
        return get_class(self.target).__name__

    def map_serializer(self, auto_schema, direction) -> dict[str, Any]:
        struct = get_class(self.target)
        _, components = msgspec.json.schema_components([struct], ref_template=_REF + "{name}")
        choices = {cls.__name__: _choices_schema(cls) for cls in _choices_enums(msgspec.inspect.type_info(struct))}
        for name, schema in components.items():
            if name != struct.__name__ and name not in choices:
                auto_schema.registry.register_on_missing(
                    ResolvedComponent(
                        name=name, type=ResolvedComponent.SCHEMA, object=name, schema=_drf_ready(schema, choices)
                    )
                )
        schema = dict(components[struct.__name__])
        schema.pop("title", None)
        return _drf_ready(schema, choices)


_REF = "#/components/schemas/"


def _choices_enums(info: msgspec.inspect.Type, seen: set[type] | None = None) -> set[type[Choices]]:
    """The Django Choices enums used anywhere in `info`."""
    seen = set() if seen is None else seen
    if isinstance(info, msgspec.inspect.EnumType):
        return {info.cls} if issubclass(info.cls, Choices) else set()
    if isinstance(info, msgspec.inspect.StructType):
        if info.cls in seen:
            return set()
        seen.add(info.cls)
        return set().union(*(_choices_enums(field.type, seen) for field in info.fields))
    found: set[type[Choices]] = set()
    for name in ("type", "item_type", "key_type", "value_type"):
        if (inner := getattr(info, name, None)) is not None:
            found |= _choices_enums(inner, seen)
    for inner in getattr(info, "types", ()):
        found |= _choices_enums(inner, seen)
    return found


def _choices_schema(cls: type[Choices]) -> dict[str, Any]:
    """drf-spectacular's schema of a ChoiceField of these choices; its enum hook names the component."""
    choices = [(value, label) for value, label in cls.choices if value not in ("", None)]
    return {"type": "string", "enum": [value for value, _ in choices], "x-spec-enum-id": list_hash(choices)}


def _drf_ready(schema: Any, choices: dict[str, dict[str, Any]]) -> Any:
    """`schema` with the choices enums inline and a type on every enum of strings (msgspec writes a
    Literal of strings as a bare `enum`; drf-spectacular's enum components need its type)."""
    if isinstance(schema, list):
        return [_drf_ready(item, choices) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if (ref := schema.get("$ref", "")).startswith(_REF) and ref.removeprefix(_REF) in choices:
        return dict(choices[ref.removeprefix(_REF)])
    typed = {key: _drf_ready(value, choices) for key, value in schema.items()}
    if "enum" in typed and "type" not in typed and all(isinstance(value, str) for value in typed["enum"]):
        typed["type"] = "string"
    return typed
