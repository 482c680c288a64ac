"""`@tool`: bare or with options, descriptions from each docstring style, and still a plain function."""

from collections.abc import Callable

import pytest

from agentkit.application.tools import Tool, tool


def add_google(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first
            number.
        b (int): The second number.

    Returns:
        The sum.
    """
    return a + b


def add_numpy(a: int, b: int) -> int:
    """Add two numbers.

    Parameters
    ----------
    a : int
        The first
        number.
    b : int
        The second number.

    Returns
    -------
    int
        The sum.
    """
    return a + b


def add_rest(a: int, b: int) -> int:
    """Add two numbers.

    :param a: The first
        number.
    :param b: The second number.
    :returns: The sum.
    """
    return a + b


@pytest.mark.parametrize("fn", [add_google, add_numpy, add_rest], ids=["google", "numpy", "rest"])
def test_docstring_styles_give_descriptions(fn: Callable[[int, int], int]) -> None:
    add = tool(fn)
    assert add.description == "Add two numbers."
    properties = add.schema.parameters["properties"]
    assert properties["a"]["description"] == "The first number."
    assert properties["b"]["description"] == "The second number."


def test_long_description_is_kept_and_sections_are_not() -> None:
    @tool
    def lookup(city: str) -> str:
        """Look up a city.

        Uses the offline gazetteer.

        Args:
            city: The city.

        Raises:
            ToolError: unknown city.
        """
        return city

    assert lookup.description == "Look up a city.\n\nUses the offline gazetteer."


def test_tool_without_docstring_has_empty_descriptions() -> None:
    @tool
    def ping(host: str) -> str:
        return host

    assert ping.description == ""
    assert ping.schema.parameters["properties"]["host"] == {"type": "string"}


def test_bare_decorator_uses_the_function() -> None:
    @tool
    def greet(name: str) -> str:
        """Say hello."""
        return f"Hello, {name}"

    assert isinstance(greet, Tool)
    assert (greet.name, greet.description, greet.timeout_s, greet.terminal) == ("greet", "Say hello.", None, False)
    assert greet.schema.name == "greet"
    assert greet.schema.description == "Say hello."
    assert greet.is_async is False


def test_decorator_options_override_the_function() -> None:
    @tool(name="get-weather", description="Weather now.", timeout=2.5, terminal=True)
    async def weather(city: str) -> str:
        """Ignored docstring."""
        return city

    assert (weather.name, weather.description, weather.timeout_s, weather.terminal) == (
        "get-weather",
        "Weather now.",
        2.5,
        True,
    )
    assert weather.schema.name == "get-weather"
    assert weather.schema.description == "Weather now."
    assert weather.is_async is True


async def test_tools_stay_directly_callable() -> None:
    @tool
    def add(a: int, b: int = 2) -> int:
        return a + b

    @tool
    async def double(n: int) -> int:
        return n * 2

    assert add(1) == 3
    assert add(1, b=5) == 6
    assert await double(4) == 8
