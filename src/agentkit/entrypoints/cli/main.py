"""`agentkit`: the parser, and how a command's outcome becomes an exit code and one line on stderr."""

import argparse
import asyncio
import sys
from collections.abc import Sequence

from agentkit.application.errors import ApplicationError, ConfigurationError
from agentkit.domain.errors import DomainError
from agentkit.entrypoints.cli import commands
from agentkit.entrypoints.cli.root import CommandRoot

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="agentkit", description="AgentKit: typed tools, a traced agent loop.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.register_all(sub)
    return parser


def run_cli(argv: Sequence[str] | None, root: CommandRoot) -> int:
    """Parse the command line and run the command on the root; return the exit code.

    0: success; 1: the run ended without success; 2: bad input or configuration (one line on stderr).
    """
    args = build_parser().parse_args(argv)
    try:
        code: int = asyncio.run(args.handler(args, root))
        return code
    except ConfigurationError as exc:
        print(f"agentkit: configuration error: {exc}", file=sys.stderr)
    except (DomainError, ApplicationError) as exc:
        print(f"agentkit: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("agentkit: interrupted", file=sys.stderr)
    return EXIT_USAGE
