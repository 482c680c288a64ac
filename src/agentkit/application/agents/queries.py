"""ListAgents and AgentTools: what the configured agents are and which tools each may call."""

import asyncio
from typing import Any

import msgspec

from agentkit.application.agents.catalog import AgentCatalog
from agentkit.application.ports.tool_source import ToolSource
from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain.tools import ToolSchema


class AgentInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One agent as listings show it.

    Attributes:
        name: Its name.
        version: Its profile's digest (runs record it).
        description: What it is for.
        provider: Its LLM provider.
        model: Its model.
        tools: The tools it may call now (its MCP servers' as they last listed them).
        terminal_tools: Those of them whose successful call ends its run.
        mcp_servers: The MCP servers it uses.
        output_schema: The schema its answers follow when a run asks for none.
        max_steps: Its runs' LLM turns at most.
        token_budget: Its runs' tokens at most, if limited.
        run_timeout_s: Its runs' wall time at most.
    """

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


class ListAgents:
    """The configured agents, `default` first."""

    def __init__(self, *, agents: AgentCatalog) -> None:
        self._agents = agents

    async def execute(self) -> list[AgentInfo]:
        """Every agent, as it stands now."""
        infos: list[AgentInfo] = []
        for name in self._agents.names():
            setup = self._agents.require(name)
            registry = setup.registry()
            tools = registry.names()
            infos.append(
                AgentInfo(
                    name=name,
                    version=setup.version,
                    description=setup.profile.description,
                    provider=setup.llm.provider,
                    model=setup.llm.model,
                    tools=tools,
                    terminal_tools=[
                        tool for tool in tools if (item := registry.get(tool)) is not None and item.terminal
                    ],
                    mcp_servers=list(setup.profile.mcp_servers),
                    output_schema=setup.output_schema,
                    max_steps=setup.max_steps,
                    token_budget=setup.token_budget,
                    run_timeout_s=setup.config.run_timeout_s,
                )
            )
        return infos


class AgentTools:
    """The tools one agent may call, with the schemas its model sees; or every registered tool.

    Rules:
    - An unknown agent is refused (UnknownAgent).
    - An agent's tools include its MCP servers' as they last listed them.
    """

    def __init__(self, *, agents: AgentCatalog, registry: ToolRegistry) -> None:
        self._agents = agents
        self._registry = registry

    async def execute(self, name: str | None, *, wait_s: float = 0.0) -> tuple[ToolSchema, ...]:
        """The agent's tool schemas, or (for None) every registered tool's.

        Args:
            name: The agent.
            wait_s: Wait this long at most for its MCP servers to be reached first (a command that
                just started them wants their tools; an HTTP request does not wait).
        """
        if name is None:
            return self._registry.schemas()
        setup = self._agents.require(name)
        if wait_s > 0 and setup.sources:
            await asyncio.gather(*(source.wait_up(wait_s) for source in setup.sources))
        return setup.registry().schemas()

    async def from_sources(self, *, wait_s: float = 0.0) -> dict[str, tuple[ToolSchema, ...]]:
        """The tools of every MCP server an agent uses, by server (waiting up to `wait_s` for each)."""
        sources = sources_of(self._agents)
        if wait_s > 0 and sources:
            await asyncio.gather(*(source.wait_up(wait_s) for source in sources))
        return {source.name: tuple(item.schema for item in source.tools()) for source in sources}


def sources_of(agents: AgentCatalog) -> list[ToolSource]:
    """Every tool source some agent uses, once each (for waiting on them before a listing)."""
    seen: dict[int, ToolSource] = {}
    for name in agents.names():
        for source in agents.require(name).sources:
            seen.setdefault(id(source), source)
    return list(seen.values())
