"""GET /v1/agents: a configured agent."""

from typing import Any

import msgspec

from agentkit.application.agents.queries import AgentInfo


class AgentView(msgspec.Struct, kw_only=True):
    """A configured agent: what it is for, its model, its tools and its limits."""

    name: str
    version: str | None
    description: str
    provider: str
    model: str
    tools: list[str]
    terminal_tools: list[str]
    mcp_servers: list[str]
    output_schema: dict[str, Any] | None
    max_steps: int
    token_budget: int | None
    run_timeout_s: float


def agent_view(info: AgentInfo) -> AgentView:
    """The wire view of an agent."""
    return msgspec.convert(msgspec.to_builtins(info), AgentView)
