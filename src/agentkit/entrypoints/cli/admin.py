"""Admin commands on the same container as the API: migrate, seed-demo, prune, runs show / trace."""

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

import msgspec

from agentkit.application.ports.demo_seeder import DemoSeeder
from agentkit.application.ports.schema_migrator import SchemaMigrator
from agentkit.application.runs.list_runs import DEFAULT_PAGE, ListRuns, ListRunsInput
from agentkit.application.runs.prune import PruneInput, PruneOldRuns
from agentkit.application.runs.queries import GetRun, GetRunTree, GetTrace
from agentkit.domain.ids import RunId, SessionId
from agentkit.domain.run import RunStatus
from agentkit.entrypoints.cli import answers
from agentkit.entrypoints.cli.console import announce
from agentkit.entrypoints.cli.root import CommandRoot
from agentkit.entrypoints.cli.run_view import is_terminal
from agentkit.entrypoints.cli.tree_view import tree_lines

if TYPE_CHECKING:
    from dishka import AsyncContainer

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `migrate`, `seed-demo`, `prune` and `runs` to the parser."""
    migrate = sub.add_parser("migrate", help="bring the database schema up to date")
    migrate.set_defaults(handler=migrate_command)

    prune = sub.add_parser("prune", help="delete finished runs, their steps and sessions older than an age")
    prune.add_argument("--older-than", required=True, type=age, help="an age such as 30d, 12h, 90m or 3600s")
    prune.set_defaults(handler=prune_command)

    seed = sub.add_parser("seed-demo", help="create or reset the demo database that sql_readonly reads")
    seed.set_defaults(handler=seed_demo_command)

    runs = sub.add_parser("runs", help="read stored runs, and answer paused ones")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True, metavar="ACTION")
    show = runs_sub.add_parser("show", help="a run's summary (a table on a terminal, else JSON)")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true", help="JSON even on a terminal")
    show.set_defaults(handler=show_command)
    trace = runs_sub.add_parser("trace", help="a run's steps (a table on a terminal, else JSON)")
    trace.add_argument("run_id")
    trace.add_argument("--json", action="store_true", help="JSON even on a terminal")
    trace.add_argument(
        "--prompts", action="store_true", help="also what each LLM call sent: the run's messages and tool sets"
    )
    trace.add_argument("--tree", action="store_true", help="the run and its child runs (agents it called), as a tree")
    trace.set_defaults(handler=trace_command)
    listing = runs_sub.add_parser("list", help="runs, newest first, as JSON (one page; --cursor for the next)")
    listing.add_argument("--status", action="append", choices=[s.value for s in RunStatus], help="repeatable")
    listing.add_argument("--session", help="only this session's runs")
    listing.add_argument("--limit", type=int, default=DEFAULT_PAGE, help=f"runs per page (default {DEFAULT_PAGE})")
    listing.add_argument("--cursor", help="the next_cursor of the page before")
    listing.set_defaults(handler=list_command)
    answers.register(runs_sub)


def _on_state(root: CommandRoot) -> contextlib.AbstractAsyncContextManager["AsyncContainer"]:
    # The state `agentkit serve` (`make run`) uses when no server is configured, named on stderr:
    # an admin command on other data than the server's would find nothing and say so wrongly.
    return root.container(quiet=True, shared_state=True, announce=announce)


def age(text: str) -> float:
    """Seconds in an age like `30d`, `12h`, `90m` or `3600s` (plain numbers are seconds)."""
    value, unit = (text[:-1], text[-1]) if text and text[-1] in _UNITS else (text, "s")
    try:
        seconds = float(value) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age like 30d, 12h, 90m or 3600s") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("the age must be positive")
    return seconds


async def migrate_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit migrate`."""
    async with _on_state(root) as container:
        migrator = await container.get(SchemaMigrator)
        await migrator.upgrade()
        print(f"database schema at revision {await migrator.current()}")
    return 0


async def seed_demo_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit seed-demo`."""
    async with _on_state(root) as container:
        print(await (await container.get(DemoSeeder)).seed())
    return 0


async def prune_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit prune --older-than AGE`."""
    async with _on_state(root) as container, container() as request:
        result = await (await request.get(PruneOldRuns)).execute(PruneInput(older_than_s=args.older_than))
    print(f"deleted {result.runs_deleted} runs (with their steps) and {result.sessions_deleted} sessions")
    return 0


async def show_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit runs show ID`."""
    async with _on_state(root) as container, container() as request:
        run = await (await request.get(GetRun)).execute(RunId(args.run_id), None)
    if not args.json and is_terminal(sys.stdout):
        from agentkit.entrypoints.cli.rich_console import print_run, terminal_console

        print_run(run, terminal_console(sys.stdout))
    else:
        sys.stdout.write(msgspec.json.encode(run).decode() + "\n")
    return 0


async def trace_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit runs trace ID [--prompts]`: the steps; with --prompts `{steps, messages, tool_sets}` as JSON."""
    if args.tree:
        return await _tree_command(args, root)
    async with _on_state(root) as container, container() as request:
        get_trace = await request.get(GetTrace)
        if args.prompts:
            _, steps, prompts = await get_trace.with_prompts(RunId(args.run_id), None)
            document = {"steps": steps, "messages": prompts.messages, "tool_sets": prompts.tool_sets}
            sys.stdout.write(msgspec.json.encode(document).decode() + "\n")
            return 0
        run, steps = await get_trace.execute(RunId(args.run_id), None)
    if not args.json and is_terminal(sys.stdout):
        from agentkit.entrypoints.cli.rich_console import print_trace, terminal_console

        print_trace(run, steps, terminal_console(sys.stdout))
    else:
        sys.stdout.write(msgspec.json.encode(steps).decode() + "\n")
    return 0


async def _tree_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit runs trace ID --tree`: the run, its steps and its child runs' (JSON with --json)."""
    async with _on_state(root) as container, container() as request:
        node = await (await request.get(GetRunTree)).execute(RunId(args.run_id), None)
    if args.json:
        sys.stdout.write(msgspec.json.encode(node).decode() + "\n")
    else:
        sys.stdout.write("\n".join(tree_lines(node)) + "\n")
    return 0


async def list_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit runs list`: one page of every owner's runs, `{runs, next_cursor}`."""
    async with _on_state(root) as container, container() as request:
        page = await (await request.get(ListRuns)).execute(
            ListRunsInput(
                owner=None,
                statuses=frozenset(RunStatus(value) for value in args.status or ()),
                session_id=SessionId(args.session) if args.session else None,
                limit=args.limit,
                cursor=args.cursor,
            )
        )
    sys.stdout.write(msgspec.json.encode(page).decode() + "\n")
    return 0
