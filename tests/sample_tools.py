"""Tools the tests give their agents; also importable by name (AGENTKIT_TOOL_MODULES=tests.sample_tools)."""

from agentkit.application.tools import ToolError, tool


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
async def lookup(city: str) -> str:
    """Look up the weather of a city."""
    if city != "Paris":
        raise ToolError(f"no weather station in {city!r}; try 'Paris'")
    return "sunny, 21 C"
