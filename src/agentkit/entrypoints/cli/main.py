"""`agentkit`: run an agent in the terminal and do admin tasks with the same container as the API."""

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from agentkit.application.errors import ApplicationError, ConfigurationError
from agentkit.domain.errors import DomainError
from agentkit.entrypoints.cli import commands

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="agentkit", description="AgentKit: typed tools, a traced agent loop.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.register_all(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `agentkit` console script; returns the exit code.

    0: success; 1: the run ended without success; 2: bad input or configuration (one line on stderr).
    """
    args = build_parser().parse_args(argv)
    try:
        code: int = asyncio.run(args.handler(args, os.environ))
        return code
    except ConfigurationError as exc:
        print(f"agentkit: configuration error: {exc}", file=sys.stderr)
    except (DomainError, ApplicationError) as exc:
        print(f"agentkit: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("agentkit: interrupted", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
