"""`agentkit run`, `agentkit demo` and `agentkit tools`: the agent in the terminal."""

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from agentkit.application.errors import ConfigurationError
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.queries import GetTrace
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.run import RunStatus
from agentkit.entrypoints.cli.console import ConsoleStepPrinter, print_outcome
from agentkit.entrypoints.cli.root import CommandRoot

LOCAL_OWNER = OwnerId("local")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `run`, `demo` and `tools` to the parser."""
    run = sub.add_parser("run", help="run the agent on a goal, showing each step as it happens")
    run.add_argument("goal", help="what the agent should do")
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

    tools = sub.add_parser("tools", help="list the registered tools and their schemas")
    tools.add_argument("--json", action="store_true", help="print the schemas as JSON")
    tools.set_defaults(handler=tools_command)


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
    output_schema = _output_schema(args.output_schema) if args.output_schema else None
    live = ConsoleStepPrinter(sys.stderr if args.json else sys.stdout)
    overrides = provider_overrides(args)
    async with (
        # quiet: the live steps are the story; operational logs on request (LOG_LEVEL)
        root.container(overrides=overrides, observers=[live], quiet=True) as container,
        container() as request,
    ):
        run_agent = await request.get(RunAgent)
        run = await run_agent.execute(
            CreateRunInput(
                owner=LOCAL_OWNER,
                goal=args.goal,
                session_id=SessionId(args.session) if args.session else None,
                max_steps=args.max_steps,
                token_budget=args.token_budget,
                cost_budget=args.cost_budget,
                output_schema=output_schema,
            )
        )
        if args.json:
            _, steps = await (await request.get(GetTrace)).execute(run.id, None)
            sys.stdout.write(msgspec.json.encode({"run": run, "trace": steps}).decode() + "\n")
        else:
            print_outcome(run)
    return 0 if run.status is RunStatus.SUCCEEDED else 1


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
    return await run_command(args, root)


async def tools_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit tools`: the registered tools and their schemas."""
    async with root.container() as container:
        schemas = (await container.get(ToolRegistry)).schemas()
    if args.json:
        sys.stdout.write(msgspec.json.encode(schemas).decode() + "\n")
        return 0
    if not schemas:
        print("no tools registered (set AGENTKIT_TOOL_MODULES to add your own)")
    for schema in schemas:
        params = ", ".join(schema.parameters.get("properties", {}))
        print(f"{schema.name}({params})\n    {schema.description.splitlines()[0] if schema.description else ''}")
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
