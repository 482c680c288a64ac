"""`agentkit run`, `agentkit demo`, `agentkit tools` and `agentkit agents`: the agents in the terminal."""

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from agentkit.application.errors import ConfigurationError
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.run import RunStatus
from agentkit.entrypoints.cli.console import announce
from agentkit.entrypoints.cli.root import CommandRoot
from agentkit.entrypoints.cli.run_view import RunView, is_terminal

# The use-cases (and the loop, structlog, rich behind them) are imported by the command that runs:
# this module is loaded for `agentkit --help` too.

LOCAL_OWNER = OwnerId("local")
# How long a command waits for an agent's MCP servers to list their tools (a server still down by
# then is retried in the background; its tools are missing from this listing).
MCP_WAIT_S = 10.0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `run`, `demo`, `tools` and `agents` to the parser."""
    run = sub.add_parser(
        "run", help="run the agent on a goal, showing each step as it happens (or follow a run of the API)"
    )
    run.add_argument("goal", nargs="?", help="what the agent should do")
    run.add_argument(
        "--follow", metavar="RUN_ID", help="follow a run of the API instead: its status and steps as they happen"
    )
    run.add_argument("--url", help="the API for --follow (default: http://HOST:PORT of the settings)")
    run.add_argument("--api-key", help="the API key for --follow (default: the first of API_KEYS)")
    run.add_argument("--agent", help="the agent to run (`agentkit agents` lists them; default: `default`)")
    run.add_argument("--json", action="store_true", help="print the whole run and its trace as JSON")
    run.add_argument("--script", help="a JSON file of scripted LLM responses (selects the scripted provider)")
    run.add_argument("--provider", help="LLM provider (overrides LLM_PROVIDER)")
    run.add_argument("--model", help="LLM model (overrides LLM_MODEL)")
    run.add_argument("--session", help="continue this session's conversation")
    run.add_argument("--max-steps", type=int, help="at most this many LLM turns (never more than MAX_STEPS)")
    run.add_argument("--token-budget", type=int, help="at most this many tokens (never more than RUN_TOKEN_BUDGET)")
    run.add_argument("--cost-budget", type=float, help="at most this many US dollars of LLM calls")
    run.add_argument("--output-schema", help="a JSON object schema for typed output (a JSON text or @file)")
    run.set_defaults(handler=run_command)

    demo = sub.add_parser("demo", help="a demo run with the built-in tools and the demo model (no provider key needed)")
    demo.set_defaults(handler=demo_command)

    tools = sub.add_parser("tools", help="list the registered tools (or an agent's) and their schemas")
    tools.add_argument("--json", action="store_true", help="print the schemas as JSON")
    tools.add_argument("--agent", help="this agent's tools, its MCP servers' included")
    tools.set_defaults(handler=tools_command)

    agents = sub.add_parser("agents", help="list the configured agents (AGENTS_FILE)")
    agents.add_argument("--json", action="store_true", help="print them as JSON")
    agents.set_defaults(handler=agents_command)


def provider_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The command line's choice of provider, model and script, as settings overrides."""
    overrides: dict[str, Any] = {}
    if getattr(args, "script", None):
        overrides.update(llm_provider="scripted", llm_script=args.script)
    if getattr(args, "provider", None):
        overrides["llm_provider"] = args.provider
    if getattr(args, "model", None):
        overrides["llm_model"] = args.model
    return overrides


async def run_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit run GOAL`: live steps, then the answer; exit 0 only when the run succeeded."""
    if args.follow:
        return await follow_command(args, root)
    if not args.goal:
        raise ConfigurationError("agentkit run needs a goal (or --follow RUN_ID)")
    output_schema = _output_schema(args.output_schema) if args.output_schema else None
    stream = sys.stderr if args.json else sys.stdout
    view = RunView(stream)
    overrides = provider_overrides(args)
    async with (
        # quiet: the live steps are the story; operational logs on request (LOG_LEVEL)
        root.container(
            overrides=overrides,
            observers=view.step_observers,
            run_observers=view.run_observers,
            quiet=True,
            runs_agent=True,
        ) as container,
        container() as request,
    ):
        # imported once the settings were found good: a bad one is reported without waiting for these
        from agentkit.application.agents.queries import AgentTools
        from agentkit.application.runs.create_run import CreateRunInput
        from agentkit.application.runs.queries import GetTrace
        from agentkit.application.runs.run_agent import RunAgent

        if args.agent:
            # its MCP servers were just started: let them list their tools before the first turn
            await (await request.get(AgentTools)).execute(args.agent, wait_s=MCP_WAIT_S)
        run_agent = await request.get(RunAgent)
        view.start()
        try:
            run = await run_agent.execute(
                CreateRunInput(
                    owner=LOCAL_OWNER,
                    goal=args.goal,
                    session_id=SessionId(args.session) if args.session else None,
                    max_steps=args.max_steps,
                    token_budget=args.token_budget,
                    cost_budget=args.cost_budget,
                    output_schema=output_schema,
                    agent=args.agent,
                    stream=view.streams,  # on a terminal, the answer is written as it comes
                )
            )
        finally:
            view.stop()
        if args.json:
            _, steps = await (await request.get(GetTrace)).execute(run.id, None)
            sys.stdout.write(msgspec.json.encode({"run": run, "trace": steps}).decode() + "\n")
        else:
            view.outcome(run)
    return 0 if run.status is RunStatus.SUCCEEDED else 1


async def follow_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit run --follow ID`: the run's events from the API until it ends; exit 0 only when it succeeded."""
    if args.goal:
        raise ConfigurationError("agentkit run takes a goal or --follow RUN_ID, not both")
    from agentkit.entrypoints.cli.follow import follow_run  # httpx, only for this command

    url, key = root.api_endpoint()
    return await follow_run(args.url or url, args.api_key or key, args.follow, as_json=args.json)


async def demo_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit demo`: the demo model on a demo question."""
    args.script = None
    args.provider = "demo"
    args.model = None
    args.goal = "What is (17 + 25) * 3, and what is 15% of it?"
    args.json = False
    args.session = None
    args.max_steps = None
    args.token_budget = None
    args.cost_budget = None
    args.output_schema = None
    args.agent = None
    args.follow = None
    return await run_command(args, root)


async def tools_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit tools`: the registered tools (or an agent's), their parameters, the built-in ones left out (and why).

    Without --agent, each MCP server's tools follow, for the agents that use it.
    """
    from agentkit.application.agents.queries import AgentTools
    from agentkit.application.tools.availability import ToolAvailability

    async with (
        root.container(quiet=True, shared_state=True, announce=announce) as container,
        container() as request,
    ):
        agent_tools = await request.get(AgentTools)
        schemas = await agent_tools.execute(args.agent, wait_s=MCP_WAIT_S)
        servers = {} if args.agent else await agent_tools.from_sources(wait_s=MCP_WAIT_S)
        availability = await container.get(ToolAvailability)
    if args.json:
        sys.stdout.write(msgspec.json.encode(schemas).decode() + "\n")
        return 0
    if is_terminal(sys.stdout):
        from agentkit.entrypoints.cli.rich_console import print_tools, terminal_console

        console = terminal_console(sys.stdout)
        print_tools(schemas, availability.absent, availability.limited, console)
        for server, offered in servers.items():
            console.print(
                f"\nfrom the MCP server {server!r}:" if offered else f"\nthe MCP server {server!r}: not reached yet"
            )
            print_tools(offered, {}, {}, console)
    else:
        from agentkit.entrypoints.cli.tool_listing import plain_listing

        print(plain_listing(schemas, availability.absent, availability.limited))
        for server, offered in servers.items():
            print(f"\nfrom the MCP server {server!r}:" if offered else f"\nthe MCP server {server!r}: not reached yet")
            if offered:
                print(plain_listing(offered, {}, {}))
    return 0


async def agents_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit agents`: the configured agents, their models, tools and limits."""
    from agentkit.application.agents.queries import ListAgents

    async with root.container(quiet=True) as container, container() as request:
        agents = await (await request.get(ListAgents)).execute()
    if args.json:
        sys.stdout.write(msgspec.json.encode(agents).decode() + "\n")
        return 0
    for agent in agents:
        model = f"{agent.provider}/{agent.model}" if agent.model else agent.provider
        terminal = f"  ends with: {', '.join(agent.terminal_tools)}" if agent.terminal_tools else ""
        print(f"{agent.name}  ({model}, version {agent.version})  {agent.description}".rstrip())
        print(f"    tools: {', '.join(agent.tools) or 'none'}{terminal}")
    return 0


def _output_schema(value: str) -> dict[str, Any]:
    if value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ConfigurationError(f"--output-schema: cannot read {value[1:]}: {reason}") from None
    else:
        text = value
    try:
        schema = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise ConfigurationError(f"--output-schema is not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise ConfigurationError("--output-schema must be a JSON object")
    return schema
