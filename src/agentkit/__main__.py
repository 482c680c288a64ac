"""`python -m agentkit`: the same as the `agentkit` command."""

import sys

from agentkit.entrypoints.wiring.main import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
