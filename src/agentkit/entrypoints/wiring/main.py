"""The `agentkit` console script: the command line, run on the composition root."""

import os
import sys
from collections.abc import Sequence

from agentkit.entrypoints.cli.main import run_cli
from agentkit.entrypoints.wiring.env_file import load_env_file
from agentkit.entrypoints.wiring.root import EnvironmentRoot


def main(argv: Sequence[str] | None = None) -> int:
    """Run `agentkit` with the process environment and `.env`; return the exit code (see `run_cli`)."""
    load_env_file(os.environ)  # the environment's own values win over the file's
    return run_cli(argv, EnvironmentRoot(os.environ))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
