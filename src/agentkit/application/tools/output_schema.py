"""Output schemas: a JSON schema for a run's typed final output, checked in full, then made a Struct type.

Total by design: any value given as an output schema either becomes a Struct type or raises
ValueError with a message naming the path (`output_schema $.properties.x.required: ...`); nothing
else escapes (no TypeError, no RecursionError), so a run is refused before it is stored instead of
failing later in the loop.

What is accepted (the OpenAPI document describes the same language, see `entrypoints/http/schema_doc.py`):
- the root is an object schema: `"type": "object"` and `"properties"`;
- in every schema (the root, each property's, each `items`) the keywords this runtime reads are well
  formed wherever they appear: `type` is a type name (string, integer, number, boolean, array, object)
  alone or in a list with "null"; `properties` maps names to schemas; `required` lists names;
  `items` is a schema; `enum` lists strings and integers (at least one); `description` is a string;
  `default` may be any value. Other keywords (title, format, minimum, ...) are kept and not enforced;
- a schema has an `enum` or a `type`; an object schema has `properties`; an array without `items`
  holds strings;
- any property name works, `class`, `from`, `first-name` and `__init__` included (fields are renamed),
  except names holding `"`, `\\` or a control character (U+0000 to U+001F), which msgspec cannot
  write as a field name (PROPERTY_NAME_PATTERN);
- the value nests at most MAX_OUTPUT_SCHEMA_DEPTH levels and holds at most MAX_OUTPUT_SCHEMA_VALUES
  values, and no key or string holds U+0000 or a lone surrogate (PostgreSQL cannot store them).
"""

import copy
import functools
import json
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

import msgspec

MAX_OUTPUT_SCHEMA_DEPTH: Final = 32
"""Nesting levels of objects and arrays an output schema may have (an object property costs two)."""
MAX_OUTPUT_SCHEMA_VALUES: Final = 2_000
"""Values (objects, arrays, strings, numbers...) an output schema may hold."""
TYPE_NAMES: Final = ("string", "integer", "number", "boolean", "array", "object")
_SCALARS: Final[dict[str, Any]] = {"string": str, "integer": int, "number": float, "boolean": bool}
_INT64: Final = range(-(2**63), 2**63)  # what msgspec can hold in an enum (Literal)
_UNSTORABLE: Final = re.compile("[\x00\ud800-\udfff]")
PROPERTY_NAME_PATTERN: Final = r'^[^\u0000-\u001f"\\]*$'
"""What a property name may be (ECMA-262 and Python read it alike): no `"`, `\\` or control character."""
_PROPERTY_NAME: Final = re.compile(PROPERTY_NAME_PATTERN)
_PLAIN_KEY: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def struct_from_json_schema(schema: Any, name: str = "Output") -> type[msgspec.Struct]:
    """A Struct type that validates what `schema` (an object schema) describes.

    Raises:
        ValueError: naming the first part of the schema that is not accepted, and where it is.
    """
    check_json_value(schema)
    _check_root(schema)
    _check_node(schema, "$")
    return _Builder().struct(schema, name, "$")


def check_json_value(value: Any) -> None:
    """Refuse what is not plain JSON within the limits: too deep, too large, unstorable text, other types.

    Iterative, so a value nested a million levels deep is refused as cheaply as any other.
    """
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    seen = 0
    while stack:
        node, path, depth = stack.pop()
        seen += 1
        if seen > MAX_OUTPUT_SCHEMA_VALUES:
            raise ValueError(f"output_schema holds more than {MAX_OUTPUT_SCHEMA_VALUES} values")
        if isinstance(node, dict | list) and depth >= MAX_OUTPUT_SCHEMA_DEPTH:
            raise ValueError(f"output_schema {path}: nested deeper than {MAX_OUTPUT_SCHEMA_DEPTH} levels")
        if isinstance(node, dict):
            for key, item in node.items():
                if not isinstance(key, str):
                    raise ValueError(f"output_schema {path}: keys must be strings, not {type(key).__name__}")
                if _UNSTORABLE.search(key):
                    _check_text(key, f"{path}: the key {_quoted(key)}")
                stack.append((item, _child(path, key), depth + 1))
        elif isinstance(node, list):
            stack.extend((item, f"{path}[{index}]", depth + 1) for index, item in enumerate(node))
        elif isinstance(node, str):
            if _UNSTORABLE.search(node):
                _check_text(node, path)
        elif isinstance(node, float) and not math.isfinite(node):
            raise ValueError(f"output_schema {path}: {node} is not a JSON number")
        elif node is not None and not isinstance(node, bool | int | float):
            raise ValueError(f"output_schema {path}: a {type(node).__name__} is not a JSON value")


def _check_text(text: str, where: str) -> None:
    found = _UNSTORABLE.search(text)
    if found is not None:
        char = f"U+{ord(found.group()):04X}"
        raise ValueError(f"output_schema {where}: contains {char}, which cannot be stored")


def _check_root(schema: Any) -> None:
    if not isinstance(schema, dict) or schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise ValueError("output_schema must be an object schema with 'properties'")


def _check_node(node: Any, path: str) -> None:
    """The keywords this runtime reads are well formed, here and in every schema below."""
    if not isinstance(node, dict):
        raise ValueError(f"output_schema {path} must be an object")
    if "type" in node:
        _type_spec(node["type"], path)
    if "enum" in node:
        _enum_values(node["enum"], path)
    if "description" in node and not isinstance(node["description"], str):
        raise ValueError(f"output_schema {path}.description: must be a string")
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise ValueError(f"output_schema {path}.required: must be an array of property names")
    properties = node.get("properties", {})
    if not isinstance(properties, dict):
        raise ValueError(f"output_schema {path}.properties: must be an object of schemas")
    for prop, sub in properties.items():
        if not _PROPERTY_NAME.fullmatch(prop):
            where = _child(f"{path}.properties", prop)
            raise ValueError(f"output_schema {where}: a property name may not hold '\"', '\\' or a control character")
        _check_node(sub, _child(f"{path}.properties", prop))
    if "items" in node:
        _check_node(node["items"], f"{path}.items")


def _type_spec(kind: Any, path: str) -> tuple[str, bool]:
    """The type name and whether null is allowed too."""
    if isinstance(kind, str):
        if kind not in TYPE_NAMES:
            raise ValueError(f"output_schema {path}: unsupported type {kind!r}")
        return kind, False
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        rest = [k for k in kind if k != "null"]
        if len(rest) != 1 or len(kind) - len(rest) > 1:
            raise ValueError(f"output_schema {path}: a type list must be one type and optionally 'null'")
        if rest[0] not in TYPE_NAMES:
            raise ValueError(f"output_schema {path}: unsupported type {rest[0]!r}")
        return rest[0], len(kind) == 2
    raise ValueError(f"output_schema {path}.type: must be a type name or a list of them")


def _enum_values(values: Any, path: str) -> tuple[str | int, ...]:
    if not isinstance(values, list) or not values or not all(_is_enum_value(v) for v in values):
        raise ValueError(f"output_schema {path}: enum must list strings or integers (64-bit)")
    return tuple(values)


def _is_enum_value(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool) and value in _INT64)


class _Builder:
    """Builds the Struct types of one schema, each named once (msgspec would qualify repeated names)."""

    def __init__(self) -> None:
        self._names: set[str] = set()

    def struct(self, schema: dict[str, Any], name: str, path: str) -> type[msgspec.Struct]:
        name = self._unique(name)
        required = set(schema.get("required", []))
        fields: list[tuple[str, Any, Any]] = []
        rename: dict[str, str] = {}
        for index, (prop, sub) in enumerate(schema["properties"].items()):
            # Python names of our own; the JSON name is the field's encoded name, so any name works
            field_name = f"field_{index}"
            rename[field_name] = prop
            annotation = self._type_of(sub, f"{name}_{_label(prop)}", _child(f"{path}.properties", prop))
            fields.append((field_name, *_field_spec(annotation, sub, required=prop in required)))
        return msgspec.defstruct(name, fields, kw_only=True, forbid_unknown_fields=True, rename=rename)

    def _type_of(self, schema: dict[str, Any], name: str, path: str) -> Any:
        kind, nullable = _type_spec(schema["type"], path) if "type" in schema else (None, False)
        if "enum" in schema:
            result: Any = Literal[_enum_values(schema["enum"], path)]
        elif kind is None:
            raise ValueError(f"output_schema {path}: needs a 'type' or an 'enum'")
        elif kind in _SCALARS:
            result = _SCALARS[kind]
        elif kind == "array":
            items = schema.get("items", {"type": "string"})
            result = list[self._type_of(items, name, f"{path}.items")]  # type: ignore[misc]
        elif not isinstance(schema.get("properties"), dict):
            raise ValueError(f"output_schema {path} must be an object schema with 'properties'")
        else:
            result = self.struct(schema, name, path)
        description = schema.get("description")
        if description:
            result = Annotated[result, msgspec.Meta(description=description)]
        return result | None if nullable else result

    def _unique(self, name: str) -> str:
        candidate, number = name, 1
        while candidate in self._names:
            number += 1
            candidate = f"{name}_{number}"
        self._names.add(candidate)
        return candidate


def _field_spec(annotation: Any, schema: dict[str, Any], *, required: bool) -> tuple[Any, Any]:
    if required:
        return annotation, msgspec.NODEFAULT
    default = schema.get("default")
    if default is None:
        return annotation | None, None
    # the schema's own default (a Struct field's, say), so a model that leaves it out gets it
    if isinstance(default, list | dict):
        factory: Callable[[], Any] = functools.partial(copy.deepcopy, default)
        return annotation, msgspec.field(default_factory=factory)
    return annotation, default


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if _PLAIN_KEY.match(key) else f"{path}[{_quoted(key)}]"


def _quoted(text: str) -> str:
    """A name as JSON writes it: readable, with control characters and lone surrogates escaped."""
    return json.dumps(text)


def _label(prop: str) -> str:
    """A property name fit for a Struct's (and a JSON schema title's) name."""
    return re.sub(r"\W", "_", prop)[:40] or "_"
