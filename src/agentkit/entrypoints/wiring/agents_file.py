"""The agents file (AGENTS_FILE, TOML): read, decoded into profiles and checked, one line per mistake.

Every line names the file, the agent (or MCP server) and the field: `agents.toml: agent 'support':
tools: unknown tool 'serch'`. All mistakes are reported at once, so one start-up shows them all.
"""

import os
import re
import tomllib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import msgspec

from agentkit.application.agents.profile import (
    DEFAULT_AGENT,
    AgentProfile,
    AgentsFile,
    McpServerSpec,
    valid_agent_name,
)
from agentkit.application.errors import ConfigurationError
from agentkit.application.tools.final_result import final_result_tool

T = TypeVar("T")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ServiceLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The service's limits, which no agent may exceed."""

    max_steps: int
    token_budget: int | None
    run_timeout_s: float


def read_agents_file(path: str) -> AgentsFile:
    """Decode the file into profiles (shape only; `check_agents` checks what they name).

    Raises:
        ConfigurationError: the file cannot be read, is not TOML, or does not have the profiles' shape.
    """
    where = f"AGENTS_FILE {path}"
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{where}: not valid TOML: {exc}") from None
    mistakes = [f"{where}: {key}: unknown section (expected agents, mcp_servers)" for key in raw if key not in _TOP]
    agents = _decode_each(raw.get("agents", {}), AgentProfile, f"{where}: agent", mistakes)
    servers = _decode_each(raw.get("mcp_servers", {}), McpServerSpec, f"{where}: mcp server", mistakes)
    if mistakes:
        raise ConfigurationError("\n".join(mistakes))
    return AgentsFile(agents=agents, mcp_servers=servers)


_TOP = frozenset({"agents", "mcp_servers"})


def _decode_each(section: Any, kind: type[T], label: str, mistakes: list[str]) -> dict[str, T]:
    if not isinstance(section, dict):
        mistakes.append(f"{label}s: must be a table of named entries")
        return {}
    decoded: dict[str, T] = {}
    for name, body in section.items():
        try:
            decoded[name] = msgspec.convert(body, kind)
        except msgspec.ValidationError as exc:
            mistakes.append(f"{label} {name!r}: {_field_message(str(exc))}")
    return decoded


def _field_message(message: str) -> str:
    # msgspec: "Expected `int` >= 1 - at `$.limits.max_steps`" -> "limits.max_steps: Expected `int` >= 1"
    detail, found, path = message.rpartition(" - at `$")
    if not found:
        return message
    field = path.rstrip("`").lstrip(".")
    return f"{field}: {detail}" if field else detail


def check_agents(
    agents: AgentsFile,
    path: str,
    *,
    tools: Collection[str],
    providers: Collection[str],
    limits: ServiceLimits,
) -> list[str]:
    """Every mistake in the profiles, one line each (empty when there is none).

    Args:
        agents: The decoded file.
        path: Its path (each line names it).
        tools: The registered tools' names.
        providers: The LLM providers installed.
        limits: The service's limits.
    """
    where = f"AGENTS_FILE {path}"
    mistakes: list[str] = []
    for name, spec in agents.mcp_servers.items():
        mistakes.extend(f"{where}: mcp server {name!r}: {line}" for line in _server_mistakes(name, spec))
    for name, profile in agents.agents.items():
        lines = _agent_mistakes(name, profile, agents.mcp_servers, tools, providers, limits)
        lines.extend(_callee_mistakes(profile, agents.agents))
        mistakes.extend(f"{where}: agent {name!r}: {line}" for line in lines)
    return mistakes


def _agent_mistakes(
    name: str,
    profile: AgentProfile,
    servers: Mapping[str, McpServerSpec],
    tools: Collection[str],
    providers: Collection[str],
    limits: ServiceLimits,
) -> list[str]:
    lines: list[str] = []
    if not valid_agent_name(name):
        lines.append("name: must be a letter, then letters, digits, '_' or '-' (at most 64)")
    known = ", ".join(sorted(tools)) or "none"
    lines.extend(
        f"tools: unknown tool {tool!r} (the tools are: {known})" for tool in profile.tools or () if tool not in tools
    )
    named = ", ".join(servers) or "none"
    lines.extend(
        f"mcp_servers: unknown MCP server {server!r} (the file names: {named})"
        for server in profile.mcp_servers
        if server not in servers
    )
    own = set(tools if profile.tools is None else profile.tools)
    prefixes = [servers[s].tool_prefix(s) for s in profile.mcp_servers if s in servers]
    lines.extend(
        f"terminal_tools: {tool!r} is not one of the agent's tools"
        for tool in profile.terminal_tools or ()
        if tool not in own and not any(tool.startswith(prefix) for prefix in prefixes)
    )
    if profile.provider is not None and profile.provider.strip().lower() not in providers:
        lines.append(f"provider: unknown provider {profile.provider!r} (installed: {', '.join(sorted(providers))})")
    if profile.output_schema is not None:
        try:
            final_result_tool(profile.output_schema)
        except ValueError as exc:
            lines.append(f"output_schema: {exc}")
    lines.extend(_limit_mistakes(profile, limits))
    return lines


def _callee_mistakes(profile: AgentProfile, agents: Mapping[str, AgentProfile]) -> list[str]:
    """The agents it calls or hands off to must be in the file (`default` always is)."""
    known = {DEFAULT_AGENT, *agents}
    listed = ", ".join(sorted(known))
    return [
        f"{field}: unknown agent {callee!r} (the agents are: {listed})"
        for field, callees in (("agents", profile.agents), ("handoffs", profile.handoffs))
        for callee in callees
        if callee not in known
    ]


def _limit_mistakes(profile: AgentProfile, limits: ServiceLimits) -> list[str]:
    own = profile.limits
    lines: list[str] = []
    if own.max_steps is not None and own.max_steps > limits.max_steps:
        lines.append(f"limits.max_steps: {own.max_steps} is above the service's MAX_STEPS ({limits.max_steps})")
    if own.token_budget is not None and limits.token_budget is not None and own.token_budget > limits.token_budget:
        lines.append(
            f"limits.token_budget: {own.token_budget} is above the service's RUN_TOKEN_BUDGET ({limits.token_budget})"
        )
    if own.run_timeout_s is not None and own.run_timeout_s > limits.run_timeout_s:
        lines.append(
            f"limits.run_timeout_s: {own.run_timeout_s:g} is above the service's RUN_TIMEOUT_S "
            f"({limits.run_timeout_s:g})"
        )
    return lines


def _server_mistakes(name: str, spec: McpServerSpec) -> list[str]:
    lines: list[str] = []
    if (spec.command is None) == (spec.url is None):
        lines.append("command, url: give one of them (a command for stdio, a url for Streamable HTTP)")
    if spec.url is not None:
        parts = urlsplit(spec.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            lines.append(f"url: {spec.url!r} is not an http or https URL")
    if spec.command is not None and (spec.headers or spec.url):
        lines.append("headers: only a url server sends headers")
    if spec.url is not None and (spec.args or spec.env or spec.cwd):
        lines.append("args, env, cwd: only a command server takes them")
    for field, values in (("env", spec.env), ("headers", spec.headers)):
        for key, value in values.items():
            lines.extend(
                f"{field}.{key}: the environment variable {var} is not set"
                for var in _ENV_REFERENCE.findall(value)
                if var not in os.environ
            )
    if not re.fullmatch(r"[A-Za-z0-9_-]*", spec.tool_prefix(name)):
        lines.append("prefix: only letters, digits, '_' and '-' (tool names must stay valid for every provider)")
    return lines


def resolved(values: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The values with each `${NAME}` replaced by the environment's value (checked by `check_agents`)."""
    return {key: _ENV_REFERENCE.sub(lambda m: environ.get(m.group(1), ""), value) for key, value in values.items()}
