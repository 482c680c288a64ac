"""Tools: `@tool`, the hidden ToolContext, the registry and typed final output."""

from agentkit.application.tools.context import ContextProvider, ToolContext, context_provider, extend
from agentkit.application.tools.errors import ToolError
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.tool import Tool, tool

__all__ = [
    "ContextProvider",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "context_provider",
    "extend",
    "tool",
]
