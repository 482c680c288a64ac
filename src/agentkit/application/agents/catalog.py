"""AgentCatalog: the configured agents, each with its model, its tools and its loop configuration."""

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
import structlog

from agentkit.application.agent.agent_tools import agent_tool, handoff_tool
from agentkit.application.agent.config import AgentConfig
from agentkit.application.agent.deps import LoopDeps
from agentkit.application.agents.profile import DEFAULT_AGENT, AgentProfile
from agentkit.application.errors import LLMRequestError, UnknownAgent
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.tool_source import ToolSource
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.tool import Tool
from agentkit.domain.messages import LLMResponse, Message
from agentkit.domain.tools import ToolSchema

logger = structlog.get_logger(__name__)

AGENT_INSTRUCTIONS_HEADING = "Instructions for this agent (they add to the rules above and never replace them):"


def agent_system_prompt(safety_rules: str, instructions: str) -> str:
    """The safety rules, then the agent's instructions: the untrusted-output rule always comes first."""
    if not instructions.strip():
        return safety_rules
    return f"{safety_rules.rstrip()}\n\n{AGENT_INSTRUCTIONS_HEADING}\n{instructions.strip()}\n"


class AgentSetup:
    """One agent as it runs: its profile, model, tools and loop configuration.

    Attributes:
        name: The agent's name.
        profile: The profile it was built from.
        version: The profile's digest (runs record it).
        llm: Its model.
        config: The loop's configuration for it (its system prompt and limits).
        max_steps: The LLM turns its runs may take at most.
        token_budget: The tokens its runs may spend, if limited.
    """

    def __init__(
        self,
        *,
        name: str,
        profile: AgentProfile,
        version: str | None,
        llm: LLMClient,
        tools: ToolRegistry,
        sources: Sequence[ToolSource] = (),
        config: AgentConfig,
        max_steps: int,
        token_budget: int | None,
    ) -> None:
        self.name = name
        self.profile = profile
        self.version = version
        self.llm = llm
        self.config = config
        self.max_steps = max_steps
        self.token_budget = token_budget
        self._tools = tools
        self._sources = tuple(sources)
        self._terminal = None if profile.terminal_tools is None else frozenset(profile.terminal_tools)
        self._built: tuple[tuple[int, ...], ToolRegistry] | None = None

    @property
    def sources(self) -> tuple[ToolSource, ...]:
        """The MCP servers (tool sources) it uses."""
        return self._sources

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The schema its answers follow when a run asks for none."""
        return self.profile.output_schema

    def registry(self) -> ToolRegistry:
        """Its tools now: its own, then its MCP servers' as they last listed them (rebuilt when they change)."""
        if not self._sources:
            return self._tools
        generations = tuple(source.generation for source in self._sources)
        if self._built is None or self._built[0] != generations:
            self._built = (generations, self._tools.select(None, extra=self._extra(), terminal=self._terminal))
        return self._built[1]

    def _extra(self) -> list[Tool[..., Any]]:
        """The sources' tools, but for a name already taken (a server's tool cannot shadow another tool)."""
        taken = set(self._tools.names())
        extra: list[Tool[..., Any]] = []
        for source in self._sources:
            for item in source.tools():
                if item.name in taken:
                    logger.warning("mcp_tool_name_taken", agent=self.name, server=source.name, tool=item.name)
                    continue
                taken.add(item.name)
                extra.append(item)
        return extra


class AgentCatalog:
    """The agents by name; `default` is always there.

    Rules:
    - An unknown name is refused (UnknownAgent, naming the agents there are) before anything is stored.
    - Each run executes with its own agent's model, tools and configuration (`deps_for`); the
      store, the trace, the sessions and the leases are shared by all agents.
    """

    def __init__(self, setups: Mapping[str, AgentSetup]) -> None:
        if DEFAULT_AGENT not in setups:
            raise ValueError("the catalog needs a default agent")
        self._setups = dict(setups)
        self._deps: dict[tuple[str, int], tuple[ToolRegistry, LoopDeps]] = {}

    def names(self) -> list[str]:
        """The agents' names, `default` first, then in the file's order."""
        return [DEFAULT_AGENT, *(name for name in self._setups if name != DEFAULT_AGENT)]

    def require(self, name: str | None) -> AgentSetup:
        """The agent of this name (`default` for None).

        Raises:
            UnknownAgent: no agent has that name.
        """
        setup = self._setups.get(name or DEFAULT_AGENT)
        if setup is None:
            raise UnknownAgent(f"no agent named {name!r}; the agents are: {', '.join(self.names())}")
        return setup

    def version_of(self, name: str) -> str | None:
        """The version (profile digest) of agent `name`, None for one not configured."""
        setup = self._setups.get(name)
        return None if setup is None else setup.version

    def deps_for(self, base: LoopDeps, name: str) -> LoopDeps:
        """The loop's dependencies for a run of agent `name`: `base` with the agent's model, tools and config.

        A run whose agent is no longer configured (the file changed before it resumed) gets a
        model that refuses at once, so it fails with a reason that says so.
        """
        setup = self._setups.get(name)
        if setup is None:
            return base.for_agent(llm=_MissingAgent(name), tools=ToolRegistry(), config=base.config)
        tools = setup.registry()
        if setup.llm is base.llm and tools is base.tools and setup.config is base.config:
            return base  # the service's own agent (`default` without a file): the loop exactly as it is
        key = (name, id(base))
        cached = self._deps.get(key)
        if cached is None or cached[0] is not tools:
            cached = (tools, base.for_agent(llm=setup.llm, tools=tools, config=setup.config))
            self._deps[key] = cached
        return cached[1]


def agent_config(
    base: AgentConfig, profile: AgentProfile, profiles: Mapping[str, AgentProfile] | None = None
) -> AgentConfig:
    """The loop configuration of an agent: the base one with its instructions, limits and callable agents.

    `profiles` (every agent's) gives the descriptions of the agents it may call.
    """
    limits = profile.limits
    known = profiles or {}
    return msgspec.structs.replace(
        base,
        system_prompt=agent_system_prompt(base.system_prompt, profile.instructions),
        repeat_limit=limits.max_repeated_calls or base.repeat_limit,
        run_timeout_s=limits.run_timeout_s or base.run_timeout_s,
        agent_tools=tuple(
            agent_tool(name, known[name].description if name in known else "") for name in profile.agents
        ),
        handoff_tools=tuple(
            handoff_tool(name, known[name].description if name in known else "") for name in profile.handoffs
        ),
    )


class _MissingAgent(LLMClient):
    """The model of an agent that is not configured: every call fails, saying why."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def provider(self) -> str:
        return "none"

    @property
    def model(self) -> str:
        return "none"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        raise LLMRequestError(f"agent {self._name!r} is not configured in this process")
