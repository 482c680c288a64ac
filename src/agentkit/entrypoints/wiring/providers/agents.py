"""The agents: the profiles of AGENTS_FILE, their models, their tools and the MCP servers they use.

Start-up checks the whole file first (one line per mistake, each naming the file, the agent and the
field) and fails there; only then are the MCP servers started. An MCP server that cannot be reached
does not stop the service: it is retried in the background and its tools answer with a tool error.
"""

import asyncio
import os
from collections.abc import AsyncIterator, Mapping

import msgspec
import structlog
from dishka import AsyncContainer, Provider, Scope, provide

from agentkit.adapters.llm.factory import build_llm_client
from agentkit.adapters.llm.registry import ProviderRegistry
from agentkit.application.agent import AgentConfig
from agentkit.application.agents.catalog import AgentCatalog, AgentSetup, agent_config
from agentkit.application.agents.profile import DEFAULT_AGENT, AgentProfile, AgentsFile, McpServerSpec, profile_version
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.tool_source import ToolSource
from agentkit.application.tools.registry import ToolRegistry
from agentkit.entrypoints.wiring.agents_file import ServiceLimits, check_agents, read_agents_file, resolved
from agentkit.entrypoints.wiring.settings import Settings

logger = structlog.get_logger(__name__)


class CheckedAgents(msgspec.Struct, frozen=True, kw_only=True):
    """The agents file as decoded and checked (empty without AGENTS_FILE)."""

    path: str | None
    file: AgentsFile


class McpServers(msgspec.Struct, frozen=True, kw_only=True):
    """The running connections to the MCP servers the agents use, by the file's names."""

    connections: dict[str, ToolSource]


LLMKey = tuple[str, str, bool | None]


class AgentLLMs(msgspec.Struct, frozen=True, kw_only=True):
    """The agents' models by (provider, model, parallel tool calls); the service's own model is not among them."""

    clients: dict[LLMKey, LLMClient]


def checked_agents(settings: Settings, tools: ToolRegistry) -> CheckedAgents:
    """Read and check AGENTS_FILE.

    Raises:
        ConfigurationError: one line per mistake, each naming the file, the agent and the field.
    """
    path = settings.agents.agents_file
    if path is None:
        return CheckedAgents(path=None, file=AgentsFile())
    file = read_agents_file(path)
    loop = settings.loop
    mistakes = check_agents(
        file,
        path,
        tools=tools.names(),
        providers=ProviderRegistry.from_entry_points().names(),
        limits=ServiceLimits(
            max_steps=loop.max_steps, token_budget=loop.run_token_budget, run_timeout_s=loop.run_timeout_s
        ),
    )
    if mistakes:
        raise ConfigurationError("\n".join(mistakes))
    return CheckedAgents(path=path, file=file)


def agent_names_of(settings: Settings) -> tuple[str, ...]:
    """The agents' names (`default` first), from AGENTS_FILE as decoded (checked when the container starts)."""
    path = settings.agents.agents_file
    return names_in(AgentsFile() if path is None else read_agents_file(path))


def names_in(file: AgentsFile) -> tuple[str, ...]:
    """The names of a file's agents, `default` first."""
    return (DEFAULT_AGENT, *(name for name in file.agents if name != DEFAULT_AGENT))


async def mcp_servers_listed(container: AsyncContainer, timeout_s: float) -> None:
    """Give the agents' MCP servers up to `timeout_s` to list their tools, so the first runs see them.

    A server still down then does not stop the start: it is retried in the background, and its
    tools appear once it answers.
    """
    servers = (await container.get(McpServers)).connections
    if not servers:
        return
    up = await asyncio.gather(*(server.wait_up(timeout_s) for server in servers.values()))
    down = [name for name, ok in zip(servers, up, strict=True) if not ok]
    if down:
        logger.warning("mcp_servers_down_at_start", servers=down, detail="their tools appear once they answer")


def _connection(name: str, spec: McpServerSpec, settings: Settings) -> ToolSource:
    # imported here: the MCP SDK takes seconds to import, and most processes use no MCP server
    from agentkit.adapters.mcp import McpServerConnection, McpTarget

    # secrets are named in the file as ${NAME} and read from the environment only here
    if spec.url is not None:
        target = McpTarget(url=spec.url, headers=resolved(spec.headers, os.environ))
    else:
        target = McpTarget(command=spec.command, args=spec.args, env=resolved(spec.env, os.environ), cwd=spec.cwd)
    connection = McpServerConnection(
        name,
        target,
        prefix=spec.tool_prefix(name),
        only=spec.tools,
        timeout_s=spec.timeout_s,
        connect_timeout_s=settings.agents.mcp_connect_timeout_s,
        ping_interval_s=settings.agents.mcp_ping_interval_s,
    )
    connection.start()
    return connection


class AgentsProvider(Provider):
    """Binds the checked agents file, the MCP connections, the agents' models and the AgentCatalog."""

    scope = Scope.APP

    @provide
    def agents_file(self, settings: Settings, tools: ToolRegistry) -> CheckedAgents:
        """AGENTS_FILE, checked against the registered tools and the installed providers."""
        return checked_agents(settings, tools)

    @provide
    async def mcp_servers(self, agents: CheckedAgents, settings: Settings) -> AsyncIterator[McpServers]:
        """A connection to each MCP server an agent uses, started now and closed (its server stopped) on exit."""
        used = {name for profile in agents.file.agents.values() for name in profile.mcp_servers}
        connections = {
            name: _connection(name, spec, settings) for name, spec in agents.file.mcp_servers.items() if name in used
        }
        try:
            yield McpServers(connections=connections)
        finally:
            for connection in connections.values():
                await connection.aclose()

    @provide
    async def agent_llms(self, agents: CheckedAgents, settings: Settings) -> AsyncIterator[AgentLLMs]:
        """A client for each model (provider, name, parallel calls) the agents add to the service's; closed on exit."""
        clients: dict[LLMKey, LLMClient] = {}
        try:
            for name, profile in agents.file.agents.items():
                key = _llm_key(profile, settings)
                if key is None or key in clients:
                    continue
                provider, model, parallel = key
                try:
                    config = msgspec.structs.replace(
                        settings.llm, llm_provider=provider, llm_model=model, llm_parallel_tool_calls=parallel
                    )
                    clients[key] = build_llm_client(config)
                except ConfigurationError as exc:
                    raise ConfigurationError(f"AGENTS_FILE {agents.path}: agent {name!r}: provider: {exc}") from None
            yield AgentLLMs(clients=clients)
        finally:
            for client in clients.values():
                await client.aclose()

    @provide
    def catalog(
        self,
        agents: CheckedAgents,
        servers: McpServers,
        llms: AgentLLMs,
        llm: LLMClient,
        tools: ToolRegistry,
        config: AgentConfig,
        settings: Settings,
    ) -> AgentCatalog:
        """Every agent of the file, and `default` (the service as configured, unless the file redefines it)."""
        profiles: Mapping[str, AgentProfile] = {DEFAULT_AGENT: AgentProfile(), **agents.file.agents}
        setups: dict[str, AgentSetup] = {}
        for name, profile in profiles.items():
            key = _llm_key(profile, settings)
            plain = name not in agents.file.agents
            setups[name] = AgentSetup(
                name=name,
                profile=profile,
                version=profile_version(profile, agents.file.mcp_servers),
                llm=llm if key is None else llms.clients[key],
                # the implicit default keeps the registry as it is (tests and the library swap it in)
                tools=tools if plain else tools.select(profile.tools, terminal=profile.terminal_tools),
                sources=[servers.connections[server] for server in profile.mcp_servers],
                config=config if plain else agent_config(config, profile, profiles),
                max_steps=profile.limits.max_steps or settings.loop.max_steps,
                token_budget=profile.limits.token_budget or settings.loop.run_token_budget,
            )
        return AgentCatalog(setups)


def _llm_key(profile: AgentProfile, settings: Settings) -> LLMKey | None:
    """(provider, model, parallel tool calls) when the profile asks for another model than the service's, else None."""
    own = settings.llm
    provider = (profile.provider or own.llm_provider).strip().lower()
    same_provider = provider == own.llm_provider.strip().lower()
    model = profile.model if profile.model is not None else (own.llm_model if same_provider else "")
    parallel = own.llm_parallel_tool_calls if profile.parallel_tool_calls is None else profile.parallel_tool_calls
    if same_provider and model == own.llm_model and parallel == own.llm_parallel_tool_calls:
        return None
    return provider, model, parallel
