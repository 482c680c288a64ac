"""EnvironmentRoot: the composition root the commands run on, reading the settings from the environment."""

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from dishka import AsyncContainer

from agentkit.application.ports.trace_sink import TraceSink
from agentkit.entrypoints.cli.root import CommandRoot
from agentkit.entrypoints.wiring.container import make_container
from agentkit.entrypoints.wiring.logging import configure_logging
from agentkit.entrypoints.wiring.providers.core import ObserversProvider
from agentkit.entrypoints.wiring.serving import serve_http
from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.entrypoints.wiring.startup import started_state
from agentkit.entrypoints.wiring.working import run_worker


class EnvironmentRoot(CommandRoot):
    """Settings read once from `environ` (with the command line's overrides), start-up, then the container.

    Args:
        environ: The process environment.
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    @contextlib.asynccontextmanager
    async def container(
        self,
        *,
        overrides: Mapping[str, Any] | None = None,
        observers: Sequence[TraceSink] = (),
        quiet: bool = False,
    ) -> AsyncIterator[AsyncContainer]:
        """Settings, logging, the state servers, and a container closed before they stop."""
        chosen = dict(overrides or {})
        if quiet and not self._environ.get("LOG_LEVEL"):
            chosen["log_level"] = "WARNING"
        settings = load_settings(self._environ, **chosen)
        configure_logging(settings.logging)
        async with started_state(settings) as endpoints:
            container = make_container(settings, ObserversProvider(observers), endpoints=endpoints)
            try:
                yield container
            finally:
                await container.close()

    async def serve(self, *, overrides: Mapping[str, Any] | None = None) -> None:
        """Serve the HTTP API until the process is told to stop."""
        await serve_http(self._environ, overrides or {})

    async def work(self, *, overrides: Mapping[str, Any] | None = None) -> None:
        """Execute queued runs until the process is told to stop."""
        await run_worker(self._environ, overrides or {})

    async def serve_mcp(self) -> None:
        """Serve the agents as MCP tools over stdio (stdout carries the protocol; logs go to stderr)."""
        from agentkit.entrypoints.mcp import serve_stdio

        async with self.container(quiet=True) as container:
            await serve_stdio(container)
