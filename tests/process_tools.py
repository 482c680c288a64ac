"""Tools that run in worker processes (a worker imports them by name: they must live in a module)."""

import os
import time
from pathlib import Path

from agentkit.application.tools import ToolError, tool


@tool(isolation="process", idempotent=True)
def whoami() -> int:
    """The process the call runs in."""
    return os.getpid()


@tool(isolation="process")
def spin(pid_file: str) -> str:
    """Say where it runs, then loop forever (a hung tool).

    Args:
        pid_file: Where to write the process id.
    """
    Path(pid_file).write_text(str(os.getpid()))
    while True:
        pass


@tool(isolation="process")
def hog(megabytes: int) -> int:
    """Take this much memory at once.

    Args:
        megabytes: How much.
    """
    return len(bytearray(megabytes * 1024 * 1024))


@tool(isolation="process")
def environment() -> list[str]:
    """The names of the variables of the process's environment."""
    return sorted(os.environ)


@tool(isolation="process")
def refuse(why: str) -> str:
    """Refuse with a message meant for the model.

    Args:
        why: The message.
    """
    raise ToolError(why)


@tool(isolation="process")
def crash() -> str:
    """Fail the way a bug does."""
    raise ValueError("bad input")


@tool(isolation="process")
def chatty() -> str:
    """Print a lot before answering: the replies must not be mixed with it."""
    print("noise " * 10_000)
    return "quiet"


@tool(isolation="process", idempotent=True)
def nap(seconds: float) -> int:
    """Sleep, then say where it ran.

    Args:
        seconds: How long.
    """
    time.sleep(seconds)
    return os.getpid()


@tool
def plain() -> int:
    """A sync tool that does not choose where it runs (TOOL_ISOLATION decides)."""
    return os.getpid()
