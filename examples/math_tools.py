"""Example user tools: load them with AGENTKIT_TOOL_MODULES=math_tools (with examples/ on PYTHONPATH)."""

from agentkit import tool


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b
