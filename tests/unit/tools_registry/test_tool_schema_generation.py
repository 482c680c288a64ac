"""The JSON schema a model sees for each kind of tool parameter."""

import inspect
from enum import Enum
from typing import Annotated, Any, Literal, Optional

import msgspec
import pytest

from agentkit.application.tools import tool


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Point(msgspec.Struct):
    lat: float
    lon: float


class Route(msgspec.Struct):
    start: Point
    stops: list[Point]
    label: str | None = None


def parameters_of(annotation: Any, default: Any = inspect.Parameter.empty) -> dict[str, Any]:
    """The parameters schema of a one-parameter tool `x: annotation = default`."""

    def probe(x: Any) -> Any:
        return x

    probe.__annotations__ = {"x": annotation, "return": Any}
    if default is not inspect.Parameter.empty:
        probe.__defaults__ = (default,)
    return tool(probe).schema.parameters


def refs_anywhere(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [key for key in node if key in ("$ref", "$defs")]
        return found + [ref for value in node.values() for ref in refs_anywhere(value)]
    if isinstance(node, list):
        return [ref for item in node for ref in refs_anywhere(item)]
    return []


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (Literal["c", "f"], {"enum": ["c", "f"]}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (
            Annotated[int, msgspec.Meta(ge=1, le=7, description="Days ahead.")],
            {"type": "integer", "minimum": 1, "maximum": 7, "description": "Days ahead."},
        ),
    ],
    ids=["str", "int", "float", "bool", "literal", "list", "dict", "annotated"],
)
def test_required_parameter_kinds(annotation: Any, expected: dict[str, Any]) -> None:
    parameters = parameters_of(annotation)
    assert parameters["type"] == "object"
    assert parameters["properties"]["x"] == expected
    assert parameters["required"] == ["x"]
    assert parameters["additionalProperties"] is False


def test_enum_lists_its_values() -> None:
    assert parameters_of(Unit)["properties"]["x"]["enum"] == ["celsius", "fahrenheit"]


@pytest.mark.parametrize(
    ("annotation", "default", "expected"),
    [
        (int, 3, {"type": "integer", "default": 3}),
        (str, "metric", {"type": "string", "default": "metric"}),
        (Optional[str], None, {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}),  # noqa: UP045
        (float | None, None, {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None}),
        (list[str], [], {"type": "array", "items": {"type": "string"}, "default": []}),
    ],
    ids=["int", "str", "Optional", "union-none", "empty-list"],
)
def test_parameters_with_defaults_are_optional(annotation: Any, default: Any, expected: dict[str, Any]) -> None:
    parameters = parameters_of(annotation, default)
    assert parameters["properties"]["x"] == expected
    assert "x" not in parameters.get("required", [])


def test_enum_default_is_its_value() -> None:
    assert parameters_of(Unit, Unit.CELSIUS)["properties"]["x"]["default"] == "celsius"


def test_nested_structs_are_inlined_without_refs() -> None:
    @tool
    def plan(route: Route, alternatives: list[Route] | None = None) -> str:
        return "ok"

    parameters = plan.schema.parameters
    assert refs_anywhere(parameters) == []
    route = parameters["properties"]["route"]
    assert route["type"] == "object"
    assert route["required"] == ["start", "stops"]
    assert route["properties"]["start"]["properties"]["lat"] == {"type": "number"}
    assert route["properties"]["stops"]["items"]["properties"]["lon"] == {"type": "number"}
    alternatives = parameters["properties"]["alternatives"]["anyOf"][0]
    assert alternatives["items"]["properties"]["start"]["required"] == ["lat", "lon"]


def test_the_tool_schema_has_no_title() -> None:
    assert "title" not in parameters_of(int)


def test_no_parameters_gives_an_empty_object() -> None:
    @tool
    def now() -> str:
        return "12:00"

    assert now.schema.parameters["properties"] == {}
    assert now.schema.parameters.get("required", []) == []


def test_annotated_description_wins_over_the_docstring() -> None:
    @tool
    def forecast(
        city: str,
        days: Annotated[int, msgspec.Meta(ge=1, le=7, description="From Meta.")] = 1,
        hours: Annotated[int, msgspec.Meta(ge=0)] = 0,
    ) -> str:
        """Forecast.

        Args:
            city: From the docstring.
            days: Also from the docstring.
            hours: Hours, from the docstring.
        """
        return city

    properties = forecast.schema.parameters["properties"]
    assert properties["city"]["description"] == "From the docstring."
    assert properties["days"]["description"] == "From Meta."
    assert properties["hours"] == {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "Hours, from the docstring.",
    }
