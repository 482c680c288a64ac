"""AgentKit: typed Python functions as tools for a traced, provider-agnostic agent loop.

from agentkit import tool, ToolContext

@tool
def add(a: float, b: float) -> float:
    \"\"\"Add two numbers.\"\"\"
    return a + b
"""

__version__ = "0.1.0"

from agentkit.application.tools import Tool, ToolContext, ToolError, ToolRegistry, tool

__all__ = ["Tool", "ToolContext", "ToolError", "ToolRegistry", "__version__", "tool"]
