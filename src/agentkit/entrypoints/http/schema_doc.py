"""The OpenAPI description of `output_schema`: the language `application/tools/output_schema.py` accepts.

Three components, registered in the document's schema registry:
- `OutputSchema`: the root, an object schema (`"type": "object"` and `properties`);
- `OutputSchemaNode`: any schema inside it; the keywords the runtime reads are well formed wherever
  they appear, each node has an `enum` or a `type`, and an object node has `properties`;
- `JsonValue`: what other keywords, `default` and the like may hold: any JSON without U+0000.

Kept beside the checks it mirrors in spirit; the schemathesis test holds the two together (every
value this description admits is accepted, every value it refuses is refused). What JSON Schema
cannot say (nesting depth, number of values) is in the descriptions.
"""

from typing import Final

from litestar.openapi.spec import OpenAPIType, Reference, Schema
from litestar.typing import FieldDefinition

from agentkit.application.tools.output_schema import (
    MAX_OUTPUT_SCHEMA_DEPTH,
    MAX_OUTPUT_SCHEMA_VALUES,
    PROPERTY_NAME_PATTERN,
    TYPE_NAMES,
)

# A JSON Schema (ECMA-262) pattern as well as a Python one; the escape, not the character, is in the text.
NO_NUL_PATTERN: Final = r"^[^\u0000]*$"
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class OutputSchema:
    """Marker type: the component name of the root of an output schema."""


class OutputSchemaNode:
    """Marker type: the component name of a schema inside an output schema."""


class JsonValue:
    """Marker type: the component name of any JSON value without U+0000."""


def _type_specs(names: tuple[str, ...]) -> list[object]:
    """Every spelling of these types: `"t"`, `["t"]`, `["t", "null"]`, `["null", "t"]`."""
    specs: list[object] = []
    for name in names:
        specs.extend([name, [name], [name, "null"], ["null", name]])
    return specs


def output_schema_reference(registry: object) -> Reference:
    """Register the three components in Litestar's schema registry; a reference to `OutputSchema`.

    Args:
        registry: The `SchemaRegistry` of the document being generated (`SchemaCreator.schema_registry`).
    """
    refs = {kind: _register(registry, kind) for kind in (OutputSchema, OutputSchemaNode, JsonValue)}
    schemas = {kind: schema for kind, (schema, _) in refs.items()}
    root_ref, node_ref, json_ref = (refs[kind][1] for kind in (OutputSchema, OutputSchemaNode, JsonValue))
    text = Schema(type=OpenAPIType.STRING, pattern=NO_NUL_PATTERN)

    _fill(
        schemas[JsonValue],
        any_of=[
            Schema(type=OpenAPIType.NULL),
            Schema(type=OpenAPIType.BOOLEAN),
            Schema(type=OpenAPIType.NUMBER),
            text,
            Schema(type=OpenAPIType.ARRAY, items=json_ref),
            Schema(type=OpenAPIType.OBJECT, property_names=text, additional_properties=json_ref),
        ],
        description="Any JSON value; no string or key holds U+0000.",
    )
    _fill(
        schemas[OutputSchemaNode],
        type=OpenAPIType.OBJECT,
        property_names=text,
        properties={
            "type": Schema(enum=_type_specs(TYPE_NAMES), description="A type, alone or in a list with 'null'."),
            "properties": Schema(
                type=OpenAPIType.OBJECT,
                property_names=Schema(type=OpenAPIType.STRING, pattern=PROPERTY_NAME_PATTERN),
                additional_properties=node_ref,
            ),
            "required": Schema(type=OpenAPIType.ARRAY, items=text),
            "items": node_ref,
            "enum": Schema(
                type=OpenAPIType.ARRAY,
                min_items=1,
                items=Schema(any_of=[text, Schema(type=OpenAPIType.INTEGER, minimum=_INT64_MIN, maximum=_INT64_MAX)]),
            ),
            "description": text,
            "default": json_ref,
        },
        additional_properties=json_ref,
        any_of=[
            Schema(required=["enum"]),
            Schema(required=["type"], properties={"type": Schema(enum=_type_specs(TYPE_NAMES[:5]))}),
            Schema(required=["type", "properties"], properties={"type": Schema(enum=_type_specs(("object",)))}),
        ],
        description=(
            "A schema inside an output schema: an `enum` of strings and integers, or a `type`; an object "
            "has `properties`, an array's `items` default to strings. Other keywords are kept, not enforced."
        ),
    )
    _fill(
        schemas[OutputSchema],
        all_of=[node_ref],
        required=["type", "properties"],
        properties={"type": Schema(const="object")},
        description=(
            "A JSON object schema the final output must follow (a `final_result` tool takes it as its "
            f"parameters). At most {MAX_OUTPUT_SCHEMA_DEPTH} levels of nesting and {MAX_OUTPUT_SCHEMA_VALUES} "
            'values; any property name without `"`, `\\` or control characters works.'
        ),
    )
    return root_ref


def _register(registry: object, kind: type) -> tuple[Schema, Reference]:
    field = FieldDefinition.from_annotation(kind)
    schema: Schema = registry.get_schema_for_field_definition(field)  # type: ignore[attr-defined]
    reference: Reference = registry.get_reference_for_field_definition(field)  # type: ignore[attr-defined]
    return schema, reference


def _fill(schema: Schema, **values: object) -> None:
    """Set a registered (shared) schema's keywords in place; filling it twice changes nothing."""
    for key, value in values.items():
        setattr(schema, key, value)
