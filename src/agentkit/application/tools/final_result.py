"""Typed final output: a built-in `final_result` tool whose parameters are the output schema.

A run that asks for structured output gets this tool added; the run ends when the model calls
it with arguments that validate, and the validated value becomes the run's output.
"""

import copy
import functools
from typing import Annotated, Any, Literal

import msgspec

from agentkit.application.tools.schema import Signature, inline_refs
from agentkit.application.tools.tool import Tool

FINAL_RESULT = "final_result"
_DESCRIPTION = "Give the final answer in the required structure. Call this once, when you have the answer."
_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def final_result_tool(output: type[msgspec.Struct] | dict[str, Any]) -> Tool[..., Any]:
    """The `final_result` tool for an output given as a Struct type or as a JSON schema object.

    With a Struct type the output is an instance of it; with a JSON schema it is plain JSON data.

    Raises:
        ValueError: the JSON schema is not an object schema this runtime can validate.
    """
    if isinstance(output, dict):
        struct_type = struct_from_json_schema(output)
        as_plain = True
    else:
        struct_type, as_plain = output, False
    fields = msgspec.structs.fields(struct_type)
    parameters = inline_refs(msgspec.json.schema(struct_type))
    parameters.pop("title", None)
    parameters.pop("description", None)
    signature = Signature(
        args_type=struct_type,
        param_names=tuple(field.name for field in fields),
        context_param=None,
        context_type=None,
        parameters=parameters,
    )

    def final_result(**values: Any) -> Any:
        value = struct_type(**values)
        return msgspec.to_builtins(value) if as_plain else value

    return Tool(final_result, name=FINAL_RESULT, description=_DESCRIPTION, terminal=True, signature=signature)


def struct_from_json_schema(schema: dict[str, Any], name: str = "Output", path: str = "$") -> type[msgspec.Struct]:
    """A Struct type that validates what `schema` (an object schema) describes.

    Supported: objects with `properties` and `required`, arrays with `items`, string, integer,
    number, boolean, `enum`, nullable types (`["string", "null"]`) and `description`.

    Raises:
        ValueError: naming the first part of the schema that is not supported.
    """
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        where = "" if path == "$" else f" {path}"
        raise ValueError(f"output_schema{where} must be an object schema with 'properties'")
    required = set(schema.get("required", []))
    fields: list[tuple[str, Any, Any]] = []
    for prop, sub in schema["properties"].items():
        prop_path = f"{path}.properties.{prop}"
        if not prop.isidentifier():
            # msgspec fields are Python identifiers; without this check defstruct raises TypeError.
            raise ValueError(f"output_schema {prop_path}: property names must be letters, digits and '_'")
        annotation = _type_of(sub, f"{name}_{prop}", prop_path)
        if prop in required:
            fields.append((prop, annotation, msgspec.NODEFAULT))
        elif isinstance(sub, dict) and "default" in sub and sub["default"] is not None:
            # the schema's own default (a Struct field's, say), so a model that leaves it out gets it
            default = sub["default"]
            if isinstance(default, list | dict):
                default = msgspec.field(default_factory=functools.partial(copy.deepcopy, default))
            fields.append((prop, annotation, default))
        else:
            fields.append((prop, annotation | None, None))
    return msgspec.defstruct(name, fields, kw_only=True, forbid_unknown_fields=True)


def _type_of(schema: Any, name: str, path: str) -> Any:
    if not isinstance(schema, dict):
        raise ValueError(f"output_schema {path} must be an object")
    if "enum" in schema:
        values = tuple(schema["enum"])
        if not values or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in values):
            raise ValueError(f"output_schema {path}: enum must list strings or integers")
        return _describe(Literal[values], schema)
    kind = schema.get("type")
    nullable = False
    if isinstance(kind, list):
        nullable = "null" in kind
        rest = [k for k in kind if k != "null"]
        if len(rest) != 1:
            raise ValueError(f"output_schema {path}: a type list must be one type and optionally 'null'")
        kind = rest[0]
    if kind in _SCALARS:
        result = _SCALARS[kind]
    elif kind == "array":
        result = list[_type_of(schema.get("items", {"type": "string"}), name, f"{path}.items")]  # type: ignore[misc]
    elif kind == "object":
        result = struct_from_json_schema(schema, name, path)
    else:
        raise ValueError(f"output_schema {path}: unsupported type {kind!r}")
    result = _describe(result, schema)
    return result | None if nullable else result


def _describe(annotation: Any, schema: dict[str, Any]) -> Any:
    description = schema.get("description")
    if isinstance(description, str) and description:
        return Annotated[annotation, msgspec.Meta(description=description)]
    return annotation
