"""ToolSource: tools that live outside this process (an MCP server's), whose listing can change."""

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, Protocol

from agentkit.application.tools.tool import Tool


class ToolSource(Protocol):
    """A supplier of tools the process does not define itself.

    The tools it hands out are ordinary `Tool`s: the registry validates, times, truncates and
    reports on their calls like any other's. A call to a source that is unreachable fails with a
    ToolError the model can read; it never fails the run or the service's start.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """The source's name (the MCP server's name in the agents file)."""

    @property
    @abstractmethod
    def generation(self) -> int:
        """A number that changes whenever the listing does (a registry built on it is rebuilt)."""

    @abstractmethod
    def tools(self) -> Sequence[Tool[..., Any]]:
        """The tools as last listed (none while the source was never reached)."""

    @abstractmethod
    async def wait_up(self, timeout_s: float) -> bool:
        """Wait until the source is reachable (True) or `timeout_s` passed (False)."""

    @abstractmethod
    async def aclose(self) -> None:
        """Stop using the source (a server the source started is stopped)."""
