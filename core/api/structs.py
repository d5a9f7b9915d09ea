"""Request bodies defined once, as msgspec Structs: validated in microseconds, refused in the API's
error envelope, documented as their JSON Schema.

A DRF serializer builds and deep-copies its fields on every request; for a small body on a hot path
(the vote) that cost more than the body's whole check. A Struct is the body's one definition:
`struct_from_body` validates the parsed JSON with it (`msgspec.convert`, strict: no string becomes
a number) and raises DRF's ValidationError keyed by the field's JSON path (`sessionId`,
`toolInvocations.2.status`), so the exception handler answers in the same envelope as for a
serializer; `StructSchema` makes drf-spectacular take a Struct wherever it takes a serializer
(`extend_schema(request=FeedbackInput)` gives the component `FeedbackInputRequest`).

msgspec names the first problem only (`every_field`: the first of each top-level field); the
messages that have a DRF wording keep it ("This field is required.", "'x' is not one of: a, b.",
"This field may not be null.", "Ensure this field has no more than 5 elements.").
"""

import re
from typing import Any

import msgspec
from django.db.models import Choices
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent, get_class, list_hash
from drf_spectacular.settings import spectacular_settings
from rest_framework.exceptions import ValidationError

from core.api.fields import NOT_BLANK_PATTERN

_AT = re.compile(r"^(?P<problem>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")
_ENUM = re.compile(r"^Invalid enum value (?P<value>.+)$")
_LENGTH = re.compile(r"^Expected `str` of length (?P<bound>[<>]=) (?P<count>\d+)$")
_ITEMS = re.compile(r"^Expected `array` of length <= (?P<count>\d+)$")
_NULL = re.compile(r"^Expected `[^`]+`, got `null`$")
_NOT_BLANK = f"Expected `str` matching regex {NOT_BLANK_PATTERN!r}"


def struct_from_body[T](data: Any, struct_type: type[T], *, every_field: bool = False) -> T:
    """`data` (a parsed JSON body) as `struct_type`; ValidationError({path: [message]}) otherwise.

    `every_field`: a refused body names each of its invalid top-level fields (the first problem
    of each), as a DRF serializer did, not only the first one; that costs a conversion per field,
    on refusal only."""
    if not isinstance(data, dict):
        raise ValidationError(
            {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {type(data).__name__}."]}
        )
    try:
        return msgspec.convert(data, struct_type)
    except msgspec.ValidationError as error:
        fields = _field_problems(data, struct_type) if every_field else {}
        if not fields:
            path, message = _problem(str(error), struct_type)
            fields = {path or "non_field_errors": [message]}
        raise ValidationError(fields) from None


def _field_problems(data: dict[str, Any], struct_type: type) -> dict[str, list[str]]:
    """The first problem of each top-level field of `data` as `struct_type`, in the fields' order."""
    problems: dict[str, list[str]] = {}
    for field in msgspec.structs.fields(struct_type):
        name = field.encode_name
        if name not in data:
            if field.required:
                problems[name] = ["This field is required."]
            continue
        try:
            msgspec.convert(data[name], field.type)
        except msgspec.ValidationError as error:
            path, message = _problem(str(error), field.type)
            problems[_dotted([name, path]) if path else name] = [message]
    return problems


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
    if problem == _NOT_BLANK:
        return _dotted(segments), "This field may not be blank."
    if _NULL.match(problem):
        return _dotted(segments), "This field may not be null."
    if items := _ITEMS.match(problem):
        return _dotted(segments), f"Ensure this field has no more than {items['count']} elements."
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
        # A nested Struct of a request body is named as drf-spectacular names a nested serializer's
        # request component (COMPONENT_SPLIT_REQUEST): `StepInput` -> `StepInputRequest`.
        suffix = "Request" if direction == "request" and spectacular_settings.COMPONENT_SPLIT_REQUEST else ""
        names = {name: name + suffix for name in components if name != struct.__name__ and name not in choices}
        for name, schema in components.items():
            if name in names:
                auto_schema.registry.register_on_missing(
                    ResolvedComponent(
                        name=names[name],
                        type=ResolvedComponent.SCHEMA,
                        object=names[name],
                        schema=_drf_ready(_untitled(schema), choices, names),
                    )
                )
        return _drf_ready(_untitled(components[struct.__name__]), choices, names)


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """A component's schema without msgspec's `title` (the class name; the component's name says it)."""
    return {key: value for key, value in schema.items() if key != "title"}


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


def _drf_ready(schema: Any, choices: dict[str, dict[str, Any]], names: dict[str, str]) -> Any:
    """`schema` with the choices enums inline, the components' references by their `names`, and a
    type on every enum of strings (msgspec writes a Literal of strings as a bare `enum`;
    drf-spectacular's enum components need its type)."""
    if isinstance(schema, list):
        return [_drf_ready(item, choices, names) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if (ref := schema.get("$ref", "")).startswith(_REF):
        if ref.removeprefix(_REF) in choices:
            return dict(choices[ref.removeprefix(_REF)])
        if ref.removeprefix(_REF) in names:
            return {**schema, "$ref": _REF + names[ref.removeprefix(_REF)]}
    typed = {key: _drf_ready(value, choices, names) for key, value in schema.items()}
    if "enum" in typed and "type" not in typed and all(isinstance(value, str) for value in typed["enum"]):
        typed["type"] = "string"
    return typed
