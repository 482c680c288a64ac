"""AgentKit: typed Python functions as tools for a traced, provider-agnostic agent loop.

from agentkit import Agent, tool

@tool
def add(a: float, b: float) -> float:
    \"\"\"Add two numbers.\"\"\"
    return a + b

result = await Agent(llm=my_llm, tools=[add]).run("what is 2+3?")
"""

from importlib import import_module
from typing import TYPE_CHECKING

from agentkit._version import __version__

if TYPE_CHECKING:
    from agentkit.agent import Agent, AgentResult
    from agentkit.application.tools import Tool, ToolContext, ToolError, ToolRegistry, context_provider, extend, tool


__all__ = [
    "Agent",
    "AgentResult",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "__version__",
    "context_provider",
    "extend",
    "tool",
]

# Each name is imported when first asked for: `import agentkit` (and the `agentkit` command, which
# lives in this package) costs next to nothing, `from agentkit import tool` loads the tool API only,
# and `Agent` (which pulls in every adapter) only when it is used.
_HOMES = {
    "Agent": "agentkit.agent",
    "AgentResult": "agentkit.agent",
    "Tool": "agentkit.application.tools",
    "ToolContext": "agentkit.application.tools",
    "ToolError": "agentkit.application.tools",
    "ToolRegistry": "agentkit.application.tools",
    "context_provider": "agentkit.application.tools",
    "extend": "agentkit.application.tools",
    "tool": "agentkit.application.tools",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentkit' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # asked once: later lookups find it without this function
    return value
