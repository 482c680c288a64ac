"""Agent profiles: what makes one agent differ from another (pure data, decoded from the agents file).

An agents file holds MCP servers and named agents. Each agent has its instructions (appended to
the safety rules, never replacing them), the tools it may use, which of them end its run, an
optional output schema, its provider and model, and its limits. The `default` agent is what a run
gets when it names none; without an agents file it is the service's configuration as it stands.
"""

import hashlib
import re
from typing import Annotated, Any, Final

import msgspec

DEFAULT_AGENT: Final = "default"
# Agent names travel in URLs, MCP tool names and CLI flags: keep them to what all of those take.
AGENT_NAME_PATTERN: Final = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
_AGENT_NAME = re.compile(AGENT_NAME_PATTERN)

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]


class AgentLimits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An agent's own limits; each unset one is the service's (MAX_STEPS, RUN_TOKEN_BUDGET, ...).

    None may exceed the service's limit: an agent can be stricter than the service, never looser.
    """

    max_steps: PositiveInt | None = None
    token_budget: PositiveInt | None = None
    run_timeout_s: PositiveFloat | None = None
    max_repeated_calls: Annotated[int, msgspec.Meta(ge=2)] | None = None


class McpServerSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An MCP server whose tools agents may use: a command over stdio, or a Streamable HTTP URL.

    Values of `env` and `headers` may name environment variables as `${NAME}`: secrets stay in the
    environment, and the file holds only their names.

    Attributes:
        command: The program to start (stdio), with `args`, `env` and `cwd`.
        url: The Streamable HTTP endpoint (`http://host:port/mcp`), with `headers`.
        prefix: Put before each tool's name (default: the server's name and `_`), so tools of
            different servers cannot clash.
        tools: Only these of the server's tools (by their name on the server); all when unset.
        timeout_s: A call's time limit (default TOOL_TIMEOUT_S).
    """

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    prefix: str | None = None
    tools: tuple[str, ...] | None = None
    timeout_s: PositiveFloat | None = None

    def tool_prefix(self, name: str) -> str:
        """What the server's tools are called by, before their own name."""
        return f"{name}_" if self.prefix is None else self.prefix


class AgentProfile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One agent, as the agents file describes it.

    Attributes:
        description: What the agent is for (shown by GET /v1/agents and to MCP clients).
        instructions: Its system prompt, appended after the safety rules.
        tools: The registered tools it may use, by name; all of them when unset.
        terminal_tools: The tools whose successful call ends its run (their output is the answer);
            unset keeps each tool's own `terminal` flag.
        mcp_servers: The MCP servers (named in the file) whose tools it may use too.
        output_schema: A JSON object schema its answers follow, when a run asks for none.
        provider: The LLM provider (default LLM_PROVIDER); keys still come from the environment.
        model: The model (default LLM_MODEL, or the provider's default when the provider differs).
        limits: Its own limits.
        parallel_tool_calls: Whether its model may ask for several tool calls in one turn (sent as
            OpenAI's `parallel_tool_calls`); unset: LLM_PARALLEL_TOOL_CALLS, else the provider's default.
        agents: The agents it may call as tools (`ask_<agent>`): each call is a child run.
        handoffs: The agents it may hand its run to (`transfer_to_<agent>`).
    """

    description: str = ""
    instructions: str = ""
    tools: tuple[str, ...] | None = None
    terminal_tools: tuple[str, ...] | None = None
    mcp_servers: tuple[str, ...] = ()
    output_schema: dict[str, Any] | None = None
    provider: str | None = None
    model: str | None = None
    limits: AgentLimits = AgentLimits()
    parallel_tool_calls: bool | None = None
    agents: tuple[str, ...] = ()
    handoffs: tuple[str, ...] = ()


class AgentsFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The agents file: MCP servers by name, agents by name."""

    mcp_servers: dict[str, McpServerSpec] = {}
    agents: dict[str, AgentProfile] = {}


def valid_agent_name(name: str) -> bool:
    """Whether `name` can name an agent (a letter, then letters, digits, `_` or `-`; at most 64)."""
    return _AGENT_NAME.fullmatch(name) is not None


def profile_version(profile: AgentProfile, servers: dict[str, McpServerSpec]) -> str:
    """A digest of the profile and the MCP servers it uses: a run records it, so a change shows.

    Environment values named as `${NAME}` enter as their names, never as the secrets they hold.
    """
    used = {name: servers[name] for name in profile.mcp_servers if name in servers}
    described = msgspec.to_builtins(profile)
    if profile.parallel_tool_calls is None:
        del described["parallel_tool_calls"]  # added later: unset, it leaves the profiles' versions as they were
    for later in ("agents", "handoffs"):
        if not described[later]:
            del described[later]  # the same
    canonical = msgspec.json.encode({"profile": described, "mcp_servers": used}, order="sorted")
    return hashlib.sha256(canonical).hexdigest()[:16]
