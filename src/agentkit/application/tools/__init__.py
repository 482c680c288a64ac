"""Tools: `@tool`, the hidden ToolContext, the registry and typed final output."""

from agentkit.application.tools.context import ToolContext
from agentkit.application.tools.errors import ToolError
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.tool import Tool, tool

__all__ = ["Tool", "ToolContext", "ToolError", "ToolRegistry", "tool"]
