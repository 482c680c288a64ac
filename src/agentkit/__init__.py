"""AgentKit: typed Python functions as tools for a traced, provider-agnostic agent loop.

from agentkit import Agent, tool

@tool
def add(a: float, b: float) -> float:
    \"\"\"Add two numbers.\"\"\"
    return a + b

result = await Agent(llm=my_llm, tools=[add]).run("what is 2+3?")
"""

from typing import TYPE_CHECKING

from agentkit._version import __version__
from agentkit.application.tools import Tool, ToolContext, ToolError, ToolRegistry, tool

if TYPE_CHECKING:
    from agentkit.agent import Agent, AgentResult


__all__ = ["Agent", "AgentResult", "Tool", "ToolContext", "ToolError", "ToolRegistry", "__version__", "tool"]


def __getattr__(name: str) -> object:
    # Agent pulls in every adapter; import it when asked for, so `from agentkit import tool` stays light.
    if name in ("Agent", "AgentResult"):
        from agentkit import agent

        return getattr(agent, name)
    raise AttributeError(f"module 'agentkit' has no attribute {name!r}")
