"""The built-in `final_result` tool, from a Struct type or from a JSON schema."""

from typing import Any

import msgspec
import pytest

from agentkit.application.tools import ToolContext, ToolRegistry
from agentkit.application.tools.final_result import FINAL_RESULT, final_result_tool
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall
from agentkit.domain.tools import ToolResult

CONTEXT = ToolContext(run_id=RunId("run-1"), owner=OwnerId("owner-1"))


class Address(msgspec.Struct):
    city: str
    country: str


class Person(msgspec.Struct):
    """A person, as the model must report it."""

    name: str
    age: int
    home: Address
    nicknames: list[str] = []


PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Full name."},
        "age": {"type": "integer"},
        "mood": {"enum": ["happy", "sad"]},
        "score": {"type": ["number", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "home": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
            "required": ["city"],
        },
    },
    "required": ["name", "age"],
}


async def submit(output: type[msgspec.Struct] | dict[str, Any], **arguments: Any) -> ToolResult:
    registry = ToolRegistry([final_result_tool(output)])
    return await registry.execute(ToolCall(id=ToolCallId("c"), name=FINAL_RESULT, arguments=arguments), CONTEXT)


def refs_anywhere(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or "$defs" in node or any(refs_anywhere(v) for v in node.values())
    if isinstance(node, list):
        return any(refs_anywhere(item) for item in node)
    return False


@pytest.mark.parametrize("output", [Person, PERSON_SCHEMA], ids=["struct", "json-schema"])
def test_it_is_a_terminal_tool_named_final_result_without_refs(output: Any) -> None:
    final = final_result_tool(output)
    assert final.name == "final_result"
    assert final.terminal is True
    assert final.description
    parameters = final.schema.parameters
    assert parameters["type"] == "object"
    assert "title" not in parameters
    assert "description" not in parameters  # the Struct's docstring is not the tool's description
    assert not refs_anywhere(parameters)


def test_struct_schema_inlines_nested_structs() -> None:
    parameters = final_result_tool(Person).schema.parameters
    assert parameters["required"] == ["name", "age", "home"]
    assert parameters["properties"]["home"]["properties"]["city"] == {"type": "string"}


async def test_struct_output_gives_an_instance() -> None:
    result = await submit(Person, name="Ada", age=36, home={"city": "London", "country": "UK"})
    assert result.ok
    assert result.value == Person(name="Ada", age=36, home=Address(city="London", country="UK"))
    assert msgspec.json.decode(result.output) == {
        "name": "Ada",
        "age": 36,
        "home": {"city": "London", "country": "UK"},
        "nicknames": [],
    }


async def test_struct_output_rejects_invalid_arguments() -> None:
    result = await submit(Person, name="Ada", age="old", home={"city": "London", "country": "UK"})
    assert not result.ok
    assert result.error is not None
    assert "`$.age`" in result.error


async def test_json_schema_output_gives_plain_data() -> None:
    result = await submit(
        PERSON_SCHEMA, name="Ada", age=36, mood="happy", score=None, tags=["math"], home={"city": "London"}
    )
    assert result.ok
    assert result.value == {
        "name": "Ada",
        "age": 36,
        "mood": "happy",
        "score": None,
        "tags": ["math"],
        "home": {"city": "London", "zip": None},
    }


async def test_json_schema_optional_properties_may_be_left_out() -> None:
    result = await submit(PERSON_SCHEMA, name="Ada", age=36)
    assert result.ok
    assert result.value["name"] == "Ada"
    assert result.value["tags"] is None


def test_json_schema_descriptions_reach_the_model() -> None:
    properties = final_result_tool(PERSON_SCHEMA).schema.parameters["properties"]
    assert properties["name"]["description"] == "Full name."
    assert properties["mood"]["anyOf"][0] == {"enum": ["happy", "sad"]}


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"age": 36}, "missing required field `name`"),
        ({"name": "Ada", "age": "36"}, "`$.age`"),
        ({"name": "Ada", "age": 36, "mood": "angry"}, "`$.mood`"),
        ({"name": "Ada", "age": 36, "tags": [1]}, "`$.tags[0]`"),
        ({"name": "Ada", "age": 36, "home": {}}, "missing required field `city` - at `$.home`"),
        ({"name": "Ada", "age": 36, "home": {"city": "L", "zip": "x"}}, "`$.home.zip`"),
        ({"name": "Ada", "age": 36, "extra": 1}, "unknown field `extra`"),
    ],
    ids=["missing", "type", "enum", "array-item", "nested-missing", "nested-type", "extra"],
)
async def test_json_schema_output_rejects_invalid_arguments(arguments: dict[str, Any], path: str) -> None:
    result = await submit(PERSON_SCHEMA, **arguments)
    assert not result.ok
    assert result.error is not None
    assert path in result.error


def _wrap(prop: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"field": prop}}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array", "items": {"type": "string"}}, "must be an object schema with 'properties'"),
        ({"type": "object"}, "must be an object schema with 'properties'"),
        (_wrap({"type": "date"}), "$.properties.field: unsupported type 'date'"),
        (_wrap({"type": "array", "items": {"type": "null"}}), "$.properties.field.items: unsupported type 'null'"),
        (_wrap({"type": ["string", "integer"]}), "$.properties.field: a type list must be one type"),
        (_wrap({"enum": []}), "$.properties.field: enum must list strings or integers"),
        (_wrap({"enum": [1.5, 2.5]}), "$.properties.field: enum must list strings or integers"),
        (_wrap({"enum": [True, False]}), "$.properties.field: enum must list strings or integers"),
        (_wrap("string"), "$.properties.field must be an object"),
        (_wrap({"type": "object"}), "$.properties.field must be an object schema with 'properties'"),
        (
            _wrap({"type": "object", "properties": {"inner": {"type": "tuple"}}}),
            "$.properties.field.properties.inner: unsupported type 'tuple'",
        ),
    ],
    ids=[
        "not-object",
        "no-properties",
        "unknown-type",
        "array-items",
        "type-list",
        "empty-enum",
        "float-enum",
        "bool-enum",
        "not-a-dict",
        "nested-no-properties",
        "nested-path",
    ],
)
def test_unsupported_json_schemas_raise_naming_the_path(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="output_schema") as info:
        final_result_tool(schema)
    assert str(info.value).startswith("output_schema")
    assert message in str(info.value)
