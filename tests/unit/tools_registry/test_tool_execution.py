"""`ToolRegistry.execute()`: every outcome becomes a ToolResult the model can read; it never raises."""

import asyncio
import threading
import time
from enum import Enum
from typing import Annotated, Any

import msgspec
import pytest

from agentkit.application.tools import ToolContext, ToolError, ToolRegistry, context_provider, tool
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.messages import ToolCall
from agentkit.domain.tools import ToolResult

CONTEXT = ToolContext(run_id=RunId("run-1"), owner=OwnerId("owner-1"), session_id=SessionId("session-1"))


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Point(msgspec.Struct):
    lat: float
    lon: float


class AppContext(ToolContext, frozen=True, kw_only=True):
    greeting: str


class LoudContext(AppContext, frozen=True, kw_only=True):
    volume: int = 11


@tool
def add(a: int, b: int = 2) -> int:
    return a + b


@tool
def forecast(city: str, days: Annotated[int, msgspec.Meta(ge=1, le=7)] = 1, unit: Unit = Unit.CELSIUS) -> str:
    return f"{city}: {days} days in {unit.value}"


@tool
def north_of(place: Point, other: Point) -> bool:
    return place.lat > other.lat


async def execute(registry: ToolRegistry, name: str, **arguments: Any) -> ToolResult:
    return await registry.execute(ToolCall(id=ToolCallId("call-1"), name=name, arguments=arguments), CONTEXT)


async def test_runs_a_tool_with_validated_arguments_and_defaults() -> None:
    registry = ToolRegistry([add])
    result = await execute(registry, "add", a=1, b=5)
    assert (result.ok, result.output, result.value, result.error, result.truncated) == (True, "6", 6, None, False)
    assert (await execute(registry, "add", a=1)).output == "3"


async def test_arguments_are_converted_to_structs_and_enums() -> None:
    registry = ToolRegistry([forecast, north_of])
    weather = await execute(registry, "forecast", city="Oslo", days=3, unit="fahrenheit")
    assert weather.output == "Oslo: 3 days in fahrenheit"
    north = await execute(registry, "north_of", place={"lat": 59.9, "lon": 10.7}, other={"lat": 48.8, "lon": 2.3})
    assert north.output == "true"


async def test_unknown_tool_lists_the_available_tools() -> None:
    result = await execute(ToolRegistry([forecast, add]), "weather", city="Oslo")
    assert not result.ok
    assert result.error == "unknown tool 'weather'; the available tools are: add, forecast"


async def test_unknown_tool_in_an_empty_registry() -> None:
    result = await execute(ToolRegistry(), "weather")
    assert result.error == "unknown tool 'weather'; the available tools are: none"


async def test_arguments_the_provider_could_not_parse_are_an_error_and_the_tool_does_not_run() -> None:
    ran: list[str] = []

    @tool
    def record(text: str = "") -> str:
        ran.append(text)
        return text

    call = ToolCall(id=ToolCallId("c"), name="record", arguments_error="Expecting ',' delimiter: line 1 column 9")
    result = await ToolRegistry([record]).execute(call, CONTEXT)
    assert not result.ok
    assert result.error is not None
    assert "not a valid JSON object" in result.error
    assert "Expecting ',' delimiter" in result.error
    assert ran == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"city": 3}, "Expected `str`, got `int` - at `$.city`"),
        ({"city": "Oslo", "days": 8}, "Expected `int` <= 7 - at `$.days`"),
        ({"city": "Oslo", "days": 2.5}, "Expected `int`, got `float` - at `$.days`"),
        ({"city": "Oslo", "unit": "kelvin"}, "Invalid enum value 'kelvin' - at `$.unit`"),
        ({}, "Object missing required field `city`"),
        ({"city": "Oslo", "country": "NO"}, "Object contains unknown field `country`"),
    ],
    ids=["wrong-type", "constraint", "float-for-int", "enum", "missing", "extra"],
)
async def test_invalid_arguments_name_the_problem(arguments: dict[str, Any], message: str) -> None:
    result = await execute(ToolRegistry([forecast]), "forecast", **arguments)
    assert not result.ok
    assert result.error == f"invalid arguments for 'forecast': {message}"


async def test_invalid_nested_argument_names_the_path() -> None:
    result = await execute(
        ToolRegistry([north_of]), "north_of", place={"lat": "north", "lon": 0}, other={"lat": 0, "lon": 0}
    )
    assert result.error is not None
    assert "`$.place.lat`" in result.error


@tool
def explode_sync(reason: str) -> str:
    raise ValueError(reason)


@tool
async def explode_async(reason: str) -> str:
    raise ValueError(reason)


@tool
def refuse_sync(reason: str) -> str:
    raise ToolError(reason)


@tool
async def refuse_async(reason: str) -> str:
    raise ToolError(reason)


@pytest.mark.parametrize("name", ["explode_sync", "explode_async"])
async def test_an_exception_becomes_an_error_naming_the_tool_and_type(name: str) -> None:
    result = await execute(ToolRegistry([explode_sync, explode_async]), name, reason="disk full")
    assert not result.ok
    assert result.error == f"tool {name!r} failed: ValueError: disk full"


@pytest.mark.parametrize("name", ["refuse_sync", "refuse_async"])
async def test_tool_error_message_is_passed_through_as_is(name: str) -> None:
    result = await execute(ToolRegistry([refuse_sync, refuse_async]), name, reason="No city called Atlantis.")
    assert result.error == "No city called Atlantis."
    assert result.model_text() == "ERROR: No city called Atlantis."


async def test_sync_tool_over_its_timeout_is_abandoned() -> None:
    release = threading.Event()

    @tool(timeout=0.05)
    def hang() -> str:
        release.wait(5)
        return "too late"

    started = time.perf_counter()
    try:
        result = await execute(ToolRegistry([hang]), "hang")
    finally:
        release.set()  # let the abandoned thread end, so the loop shuts down promptly
    assert time.perf_counter() - started < 2
    assert not result.ok
    assert result.error == "tool 'hang' timed out after 0.05 s"


async def test_async_tool_over_its_timeout_is_cancelled() -> None:
    cancelled = asyncio.Event()

    @tool(timeout=0.05)
    async def hang() -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "too late"

    result = await execute(ToolRegistry([hang]), "hang")
    assert result.error == "tool 'hang' timed out after 0.05 s"
    assert cancelled.is_set()


async def test_registry_default_timeout_applies_to_tools_without_one() -> None:
    @tool
    async def hang() -> str:
        await asyncio.sleep(5)
        return "too late"

    result = await execute(ToolRegistry([hang], default_timeout_s=0.05), "hang")
    assert result.error == "tool 'hang' timed out after 0.05 s"


async def test_tool_timeout_wins_over_the_registry_default() -> None:
    @tool(timeout=0.05)
    async def hang() -> str:
        await asyncio.sleep(5)
        return "too late"

    result = await execute(ToolRegistry([hang], default_timeout_s=30), "hang")
    assert result.error == "tool 'hang' timed out after 0.05 s"


@pytest.mark.parametrize(
    ("size", "truncated"),
    [(9, False), (10, False), (25, True)],
)
async def test_long_output_is_truncated_and_marked(size: int, truncated: bool) -> None:
    @tool
    def text(n: int) -> str:
        return "x" * n

    result = await execute(ToolRegistry([text], output_max_chars=10), "text", n=size)
    assert result.ok
    assert result.output == "x" * min(size, 10)
    assert result.truncated is truncated
    assert result.value == "x" * size


@pytest.mark.parametrize(
    ("value", "output"),
    [
        ({"temp": 21.5, "sky": "clear"}, '{"temp":21.5,"sky":"clear"}'),
        ([1, 2, 3], "[1,2,3]"),
        (42, "42"),
        (True, "true"),
        (None, ""),
        (b"raw bytes", "raw bytes"),
        (Point(lat=1.5, lon=2.0), '{"lat":1.5,"lon":2.0}'),
    ],
    ids=["dict", "list", "int", "bool", "none", "bytes", "struct"],
)
async def test_non_string_results_are_rendered_as_json(value: Any, output: str) -> None:
    @tool
    def give() -> Any:
        return value

    result = await execute(ToolRegistry([give]), "give")
    assert result.ok
    assert result.output == output
    assert result.value == value


def _self_containing() -> list[Any]:
    items: list[Any] = []
    items.append(items)
    return items


@pytest.mark.parametrize(
    "make",
    [object, lambda: b"\xff\xfe", _self_containing, lambda: {(1, 2): "tuple key"}],
    ids=["object", "bad-utf8", "self-containing", "tuple-key"],
)
async def test_a_result_that_cannot_be_rendered_is_an_error(make: Any) -> None:
    @tool
    def give() -> Any:
        return make()

    result = await execute(ToolRegistry([give]), "give")
    assert not result.ok
    assert result.error is not None
    assert result.error.startswith("the tool's result cannot be shown as text")


async def test_sync_tools_run_in_a_worker_thread() -> None:
    @tool
    def where() -> int:
        return threading.get_ident()

    result = await execute(ToolRegistry([where]), "where")
    assert result.ok
    assert result.value != threading.get_ident()


async def test_non_empty_mutable_defaults_are_fresh_for_each_call() -> None:
    @tool
    def tag(extra: str, tags: list[str] = ["base"]) -> list[str]:  # noqa: B006 - what the test is about
        tags.append(extra)
        return tags

    registry = ToolRegistry([tag])
    await execute(registry, "tag", extra="first")
    second = await execute(registry, "tag", extra="second")
    assert second.value == ["base", "second"]


async def test_the_context_is_hidden_from_the_model_and_injected() -> None:
    @tool
    def whoami(ctx: ToolContext, prefix: str) -> str:
        return f"{prefix} {ctx.owner} {ctx.run_id} {ctx.session_id}"

    assert list(whoami.schema.parameters["properties"]) == ["prefix"]
    result = await execute(ToolRegistry([whoami]), "whoami", prefix="I am")
    assert result.output == "I am owner-1 run-1 session-1"


async def test_the_model_cannot_supply_the_context() -> None:
    @tool
    def whoami(ctx: ToolContext) -> str:
        return ctx.owner

    result = await execute(ToolRegistry([whoami]), "whoami", ctx={"run_id": "x", "owner": "intruder"})
    assert result.error == "invalid arguments for 'whoami': Object contains unknown field `ctx`"


async def test_optional_context_is_injected_too() -> None:
    @tool
    async def whoami(ctx: ToolContext | None = None) -> str:
        return ctx.owner if ctx is not None else "nobody"

    assert whoami.schema.parameters["properties"] == {}
    assert (await execute(ToolRegistry([whoami]), "whoami")).output == "owner-1"


@context_provider
def _app_context(base: ToolContext) -> AppContext:
    return AppContext(run_id=base.run_id, owner=base.owner, greeting="Hello from the provider")


@context_provider
def _loud_context(base: ToolContext) -> LoudContext:
    return LoudContext(run_id=base.run_id, owner=base.owner, greeting="HELLO")


async def test_a_context_subclass_comes_from_its_provider() -> None:
    @tool
    def greet(ctx: AppContext) -> str:
        return f"{ctx.greeting}, {ctx.owner}"

    result = await execute(ToolRegistry([greet], context_providers=[_app_context]), "greet")
    assert result.output == "Hello from the provider, owner-1"


async def test_a_provider_of_a_narrower_context_serves_tools_asking_for_its_base() -> None:
    @tool
    def greet(ctx: AppContext) -> str:
        return type(ctx).__name__

    result = await execute(ToolRegistry([greet], context_providers=[_loud_context]), "greet")
    assert result.output == "LoudContext"


async def test_a_copy_with_more_tools_keeps_the_context_providers() -> None:
    @tool
    def greet(ctx: AppContext) -> str:
        return ctx.greeting

    base = ToolRegistry(context_providers=[_app_context])
    extended = base.with_tools([greet])
    assert (await execute(extended, "greet")).output == "Hello from the provider"


async def test_a_timeout_raised_by_the_tool_itself_is_not_reported_as_ours() -> None:
    @tool(timeout=5)
    async def flaky_socket() -> str:
        """Fail the way a socket timeout does."""
        raise TimeoutError("read timed out")

    result = await ToolRegistry([flaky_socket]).execute(
        ToolCall(id=ToolCallId("c1"), name="flaky_socket"), ToolContext(run_id=RunId("r"), owner=OwnerId("o"))
    )

    assert result.ok is False
    assert result.error == "tool 'flaky_socket' failed: TimeoutError: read timed out"
