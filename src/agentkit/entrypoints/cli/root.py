"""CommandRoot: what the commands need from the composition root, which implements it.

The commands stay free of wiring: they ask the root for a container (with the command line's
setting overrides and live observers) or to serve the API, and call use-cases from it.
"""

import contextlib
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the commands' modules load for `agentkit --help`, which must not wait for dishka
    from dishka import AsyncContainer

    from agentkit.application.ports.run_observer import RunObserver
    from agentkit.application.ports.trace_sink import TraceSink


class CommandRoot(Protocol):
    """Builds what a command runs on."""

    @abstractmethod
    def container(
        self,
        *,
        overrides: Mapping[str, Any] | None = None,
        observers: Sequence["TraceSink"] = (),
        run_observers: Sequence["RunObserver"] = (),
        quiet: bool = False,
        runs_agent: bool = False,
        shared_state: bool = False,
        announce: Callable[[str], None] | None = None,
    ) -> contextlib.AbstractAsyncContextManager["AsyncContainer"]:
        """A container on the configured state (servers started first, everything closed on exit).

        Args:
            overrides: Settings the command line sets, by variable name in lower case (None: unset).
            observers: Trace sinks that see every step as it happens.
            run_observers: Run observers that see every stored run, step and fragment of a streamed run,
                in order, after the service's own.
            quiet: Log warnings only, unless LOG_LEVEL says otherwise (the command's output is the story).
            runs_agent: The command runs the agent: the LLM provider is built first, so a missing
                key is reported before any server starts.
            shared_state: With no server configured (STATE_BACKEND=auto), use the embedded servers
                and data folder `agentkit serve` uses (`make run`), not state in memory.
            announce: Told, in one line, where the state lives, before any server starts.

        Raises:
            ConfigurationError: a setting is bad (one line naming the variable).
        """

    @abstractmethod
    async def serve(self, *, overrides: Mapping[str, Any] | None = None) -> None:
        """Serve the HTTP API until the process is told to stop."""

    @abstractmethod
    async def work(self, *, overrides: Mapping[str, Any] | None = None) -> None:
        """Execute queued runs until the process is told to stop."""

    def api_endpoint(self) -> tuple[str, str | None]:
        """The API this configuration serves (`http://HOST:PORT`) and a key for it (the first of API_KEYS)."""
        return "http://127.0.0.1:8000", None

    async def serve_mcp(self) -> None:
        """Serve the agents as MCP tools over stdio until the client closes the connection."""
