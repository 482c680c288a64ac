"""What the registry accepts, and the clear errors for what it refuses."""

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from agentkit.application.errors import ToolRegistrationError
from agentkit.application.tools import ToolContext, ToolRegistry, context_provider, extend, tool


class Node(msgspec.Struct):
    value: int
    children: list["Node"] = []


class AppContext(ToolContext, frozen=True, kw_only=True):
    greeting: str


def _number(a: int) -> int:
    return a


def _text(b: str) -> str:
    return b


def _star_args(*values: int) -> int:
    return sum(values)


def _star_kwargs(**values: int) -> int:
    return sum(values.values())


def _positional_only(a: int, /) -> int:
    return a


def _two_contexts(first: ToolContext, second: ToolContext) -> str:
    return "never"


def _recursive(tree: Node) -> int:
    return tree.value


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (_star_args, "parameter 'values' must be a named parameter"),
        (_star_kwargs, "parameter 'values' must be a named parameter"),
        (_positional_only, "parameter 'a' must be a named parameter"),
        (_two_contexts, "only one parameter may take the ToolContext"),
        (_recursive, "recursive type 'Node'"),
    ],
    ids=["args", "kwargs", "positional-only", "two-contexts", "recursive-struct"],
)
def test_unsupported_signatures_are_refused(fn: Callable[..., Any], message: str) -> None:
    with pytest.raises(ToolRegistrationError, match=message):
        tool(fn)


@pytest.mark.parametrize("name", ["has space", "dot.name", "x" * 65, "héllo", "<lambda>", "2fast", "-dash"])
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ToolRegistrationError, match="must be 1-64 ASCII letters, digits"):
        tool(name=name)(_number)


@pytest.mark.parametrize("name", ["get_weather", "get-weather", "x" * 64, "v2", "_private"])
def test_good_names_are_accepted(name: str) -> None:
    assert tool(name=name)(_number).name == name


@pytest.mark.parametrize("timeout", [0, -1.5])
def test_non_positive_timeout_is_refused(timeout: float) -> None:
    with pytest.raises(ToolRegistrationError, match="timeout must be positive"):
        tool(timeout=timeout)(_number)


def test_duplicate_name_is_refused() -> None:
    registry = ToolRegistry([tool(name="echo")(_number)])
    with pytest.raises(ToolRegistrationError, match="'echo' is already registered"):
        registry.register(tool(name="echo")(_text))


def test_a_plain_function_is_refused() -> None:
    plain: Any = _number
    with pytest.raises(ToolRegistrationError, match="decorate it with @tool"):
        ToolRegistry().register(plain)


def test_context_type_without_a_provider_is_refused() -> None:
    @tool
    def greet(ctx: AppContext) -> str:
        return ctx.greeting

    with pytest.raises(ToolRegistrationError, match="asks for AppContext"):
        ToolRegistry([greet])


def test_context_type_with_a_provider_is_accepted() -> None:
    @tool
    def greet(ctx: AppContext) -> str:
        return ctx.greeting

    @context_provider
    def app_context(base: ToolContext) -> AppContext:
        return extend(base, AppContext, greeting="hi")

    registry = ToolRegistry([greet], context_providers=[app_context])
    assert registry.names() == ["greet"]


def test_registry_lists_names_and_schemas_in_registration_order() -> None:
    first, second = tool(name="first")(_number), tool(name="second")(_text)
    registry = ToolRegistry([first, second])
    assert registry.names() == ["first", "second"]
    assert [schema.name for schema in registry.schemas()] == ["first", "second"]
    assert registry.get("second") is second
    assert registry.get("third") is None
    assert len(registry) == 2


def test_with_tools_copies_and_leaves_the_original_alone() -> None:
    base = ToolRegistry([tool(name="first")(_number)])
    extended = base.with_tools([tool(name="second")(_text)])
    assert extended.names() == ["first", "second"]
    assert base.names() == ["first"]
