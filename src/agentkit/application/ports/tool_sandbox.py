"""The ToolSandbox port: sync tool functions run in worker processes that can be killed.

A thread cannot be stopped: a sync tool that overruns its timeout in a thread runs on until it
returns. A sandbox runs the function in a process of its own instead, under limits (time, CPU,
memory) and without the service's environment, and kills the process when the call must stop.
"""

from abc import abstractmethod
from typing import Any, Protocol

import msgspec


class FunctionRef(msgspec.Struct, frozen=True):
    """A module-level function, by the names a fresh process imports it by.

    Attributes:
        module: Its module (`mytools.billing`).
        qualname: Its name in that module (`charge`); a `@tool` there is called as its function.
    """

    module: str
    qualname: str


class ToolStopped(Exception):
    """The call's process was stopped before the function returned: a limit it went over, or a crash.

    Attributes:
        timed_out: It was still running at its time limit (then killed).
    """

    def __init__(self, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out


class ToolRaised(Exception):
    """The function raised in its process (any exception but a ToolError, which passes as itself).

    Attributes:
        type_name: The exception's class name, as a model reads it (`ValueError`).
    """

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


class ToolSandbox(Protocol):
    """Runs sync tool functions in worker processes, each call in a process of its own while it runs."""

    @abstractmethod
    async def call(self, target: FunctionRef, kwargs: dict[str, Any], *, timeout_s: float) -> Any:
        """`target(**kwargs)` in a worker process; its return value.

        The time limit counts from when a process takes the call (waiting for a free one is not
        counted): past it the process is killed. Cancelling the await kills the process too, so a
        cancelled run leaves nothing running. A killed process is replaced.

        Raises:
            ToolError: the function raised one (its message is meant for the model), or its
                arguments or result cannot cross to or from the process.
            ToolRaised: the function raised another exception.
            ToolStopped: the process was killed (time, CPU or memory limit) or died.
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Kill every worker process and wait until they are gone."""
