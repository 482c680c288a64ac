"""Output schemas are checked in full: any value becomes a Struct type or a ValueError naming the path."""

import sys
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.application.tools import ToolContext, ToolRegistry
from agentkit.application.tools.final_result import FINAL_RESULT, final_result_tool
from agentkit.application.tools.output_schema import (
    MAX_OUTPUT_SCHEMA_DEPTH,
    MAX_OUTPUT_SCHEMA_VALUES,
    struct_from_json_schema,
)
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall
from agentkit.domain.tools import ToolResult

CONTEXT = ToolContext(run_id=RunId("run-1"), owner=OwnerId("owner-1"))


def with_field(prop: Any, **root: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": prop}, **root}


def nested(levels: int) -> dict[str, Any]:
    """An object schema whose property `a` is an object schema, `levels` times."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


async def submit(schema: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
    registry = ToolRegistry([final_result_tool(schema)])
    return await registry.execute(ToolCall(id=ToolCallId("c"), name=FINAL_RESULT, arguments=arguments), CONTEXT)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (with_field({"type": "string"}, required=5), "output_schema $.required: must be an array of property names"),
        (with_field({"type": "string"}, required=None), "output_schema $.required: must be an array"),
        (with_field({"type": "string"}, required=[1]), "output_schema $.required: must be an array"),
        (with_field({"type": "object", "properties": {}, "required": 5}), "$.properties.x.required: must be an array"),
        (with_field({"type": {}}), "output_schema $.properties.x.type: must be a type name or a list of them"),
        (with_field({"type": [["string"]]}), "$.properties.x.type: must be a type name or a list of them"),
        (with_field({"type": 5}), "$.properties.x.type: must be a type name"),
        (with_field({"type": None, "enum": ["a"]}), "$.properties.x.type: must be a type name"),
        (with_field({"type": ["null"]}), "$.properties.x: a type list must be one type and optionally 'null'"),
        (with_field({"type": ["string", "null", "null"]}), "$.properties.x: a type list must be one type"),
        (with_field({"type": ["date", "null"]}), "$.properties.x: unsupported type 'date'"),
        (with_field({"enum": 5}), "output_schema $.properties.x: enum must list strings or integers"),
        (with_field({"enum": None}), "$.properties.x: enum must list strings or integers"),
        (with_field({"enum": [2**63]}), "$.properties.x: enum must list strings or integers (64-bit)"),
        (with_field({"enum": ["a"], "type": {}}), "$.properties.x.type: must be a type name"),
        (with_field({"description": 5, "type": "string"}), "$.properties.x.description: must be a string"),
        (with_field({"type": "string", "properties": 5}), "$.properties.x.properties: must be an object of schemas"),
        (with_field({"type": "string", "items": 5}), "$.properties.x.items must be an object"),
        (with_field({"type": "string", "properties": {"y": {"type": "date"}}}), "x.properties.y: unsupported type"),
        (with_field({}), "output_schema $.properties.x: needs a 'type' or an 'enum'"),
        (with_field({"type": "array", "items": {}}), "$.properties.x.items: needs a 'type' or an 'enum'"),
        ({"type": "object", "properties": {"a b": 5}}, 'output_schema $.properties["a b"] must be an object'),
        ({"type": "object", "properties": {'a"b': {"type": "string"}}}, 'properties["a\\"b"]: a property name may not'),
        ({"type": "object", "properties": {"a\\b": {"type": "string"}}}, "a property name may not hold"),
        ({"type": "object", "properties": {"tab\t": {"type": "string"}}}, "a property name may not hold"),
        ({"type": "object", "properties": {"end\n": {"type": "string"}}}, "a property name may not hold"),
        ({"type": "object", "properties": []}, "output_schema must be an object schema with 'properties'"),
        ([], "output_schema must be an object schema with 'properties'"),
        (None, "output_schema must be an object schema with 'properties'"),
        ("object", "output_schema must be an object schema with 'properties'"),
    ],
)
def test_malformed_parts_are_refused_naming_the_path(schema: Any, message: str) -> None:
    with pytest.raises(ValueError, match=r"^output_schema") as info:
        struct_from_json_schema(schema)
    assert message in str(info.value)


@pytest.mark.parametrize("name", ["__init__", "class", "from", "first-name", "a b", "", "__struct_fields__", "é"])
async def test_any_property_name_works(name: str) -> None:
    schema = {
        "type": "object",
        "properties": {name: {"type": "integer"}, "other": {"type": "string"}},
        "required": [name, "other"],
    }

    good = await submit(schema, {name: 1, "other": "x"})
    bad = await submit(schema, {name: "one", "other": "x"})

    assert good.ok, good.error
    assert good.value == {name: 1, "other": "x"}
    assert final_result_tool(schema).schema.parameters["properties"][name] == {"type": "integer"}
    assert not bad.ok
    assert bad.error is not None
    assert "Expected `int`, got `str`" in bad.error


async def test_nested_objects_with_the_same_names_do_not_collide() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a_b": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            "a": {
                "type": "object",
                "properties": {"b": {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]}},
            },
        },
    }

    result = await submit(schema, {"a_b": {"x": 1}, "a": {"b": {"y": "z"}}})

    assert result.ok, result.error
    assert result.value == {"a_b": {"x": 1}, "a": {"b": {"y": "z"}}}


@pytest.mark.parametrize("levels", [MAX_OUTPUT_SCHEMA_DEPTH // 2 + 1, 120, 500, 1000, 50_000])
def test_a_deep_schema_is_refused_before_anything_recurses(levels: int) -> None:
    schema = nested(levels)

    with pytest.raises(ValueError, match=f"nested deeper than {MAX_OUTPUT_SCHEMA_DEPTH} levels"):
        struct_from_json_schema(schema)


def test_a_schema_at_the_depth_limit_builds_a_working_tool() -> None:
    # the root and every property level cost two levels of JSON nesting: {"properties": {"a": {...}}}
    schema = nested(MAX_OUTPUT_SCHEMA_DEPTH // 2 - 1)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # far below Python's default: building must not be close to it
    try:
        tool = final_result_tool(schema)
    finally:
        sys.setrecursionlimit(limit)
    assert tool.schema.parameters["type"] == "object"


def test_a_schema_with_too_many_values_is_refused() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(MAX_OUTPUT_SCHEMA_VALUES)}}

    with pytest.raises(ValueError, match=f"output_schema holds more than {MAX_OUTPUT_SCHEMA_VALUES} values"):
        struct_from_json_schema(schema)


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (with_field({"type": "string", "description": "a\x00b"}), "$.properties.x.description: contains U+0000"),
        ({"type": "object", "properties": {"a\x00": {"type": "string"}}}, '$.properties: the key "a\\u0000"'),
        (with_field({"enum": ["ok", "\x00"]}), "$.properties.x.enum[1]: contains U+0000"),
        (with_field({"type": "string", "title": "\ud800"}), "$.properties.x.title: contains U+D800"),
        (with_field({"type": "string", "examples": [{"\x00": 1}]}), "x.examples[0]: the key"),
    ],
)
def test_text_postgres_cannot_store_is_refused_anywhere(schema: dict[str, Any], where: str) -> None:
    with pytest.raises(ValueError, match="cannot be stored") as info:
        struct_from_json_schema(schema)
    assert where in str(info.value)
    assert "\x00" not in str(info.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (with_field({"type": "string", "default": {1, 2}}), "$.properties.x.default: a set is not a JSON value"),
        (with_field({"type": "number", "default": float("inf")}), "$.properties.x.default: inf is not a JSON number"),
        ({"type": "object", "properties": {1: {"type": "string"}}}, "$.properties: keys must be strings, not int"),
    ],
)
def test_values_that_are_not_json_are_refused(value: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="output_schema") as info:
        struct_from_json_schema(value)
    assert message in str(info.value)


async def test_unknown_keywords_are_kept_and_not_enforced() -> None:
    schema = with_field({"type": "integer", "minimum": 3, "title": "X", "format": "int32"}, additionalProperties=True)

    result = await submit(schema, {"x": 1})

    assert result.ok, result.error


async def test_nullable_enums_and_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mood": {"enum": ["happy", "sad"], "type": ["string", "null"]},
            "tags": {"type": "array", "default": ["a"]},
            "size": {"type": "integer", "default": 3},
        },
        "required": ["mood", "not-a-property"],
    }

    result = await submit(schema, {"mood": None})

    assert result.ok, result.error
    assert result.value == {"mood": None, "tags": ["a"], "size": 3}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)
keywords = st.sampled_from(["type", "properties", "required", "items", "enum", "description", "default", "title"])
type_values = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null", "date"])
schema_like = st.recursive(
    st.dictionaries(keywords, json_values | type_values | st.lists(type_values, max_size=3), max_size=4),
    lambda inner: st.fixed_dictionaries(
        {"type": st.sampled_from(["object", "array", ["object", "null"]])},
        optional={
            "properties": st.dictionaries(st.text(max_size=4), inner, max_size=3),
            "items": inner,
            "required": st.lists(st.text(max_size=4), max_size=3) | json_values,
            "enum": st.lists(st.integers() | st.text(max_size=3), max_size=3) | json_values,
        },
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, schema_like, schema_like.map(lambda s: {**s, "type": "object"})))
def test_any_json_value_becomes_a_tool_or_a_value_error(value: Any) -> None:
    try:
        tool = final_result_tool(value) if isinstance(value, dict) else struct_from_json_schema(value)
    except ValueError as exc:
        message = str(exc)
    else:
        message = "output_schema accepted"
        if not isinstance(tool, type):
            msgspec.json.encode(tool.schema.parameters)  # the schema the model sees is plain JSON
    assert message.startswith("output_schema")
