"""The tools bench/parallel_tools.py runs in worker processes (a worker imports them by name: `isolated_tools`)."""

import os
import time


def noop(i: int) -> int:
    """Do nothing: what a call costs beyond its work.

    Args:
        i: A counter.
    """
    return i


def nap(seconds: float, i: int = 0) -> int:
    """Sleep (a sync tool waiting on I/O), then say where it ran.

    Args:
        seconds: How long.
        i: Which call.
    """
    time.sleep(seconds)
    return os.getpid()


def spin(i: int) -> None:
    """Loop forever (a hung tool).

    Args:
        i: A counter.
    """
    while True:
        pass
