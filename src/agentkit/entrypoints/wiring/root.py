"""EnvironmentRoot: the composition root the commands run on, reading the settings from the environment.

Its module is loaded for every `agentkit` command, `--help` included, so it imports only what
reading the settings needs; the container, the state servers and the HTTP server are imported by
the method that uses them, after the settings (and, for a command that runs the agent, the LLM
provider's own settings) were found good. A bad setting is one line within a fraction of a second.
"""

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentkit.entrypoints.cli.root import CommandRoot
from agentkit.entrypoints.wiring.settings import Settings, load_settings

if TYPE_CHECKING:
    from dishka import AsyncContainer

    from agentkit.application.ports.llm_client import LLMClient
    from agentkit.application.ports.run_observer import RunObserver
    from agentkit.application.ports.trace_sink import TraceSink


class EnvironmentRoot(CommandRoot):
    """Settings read once from `environ` (with the command line's overrides), start-up, then the container.

    Args:
        environ: The process environment (with the `.env` file's variables: see `env_file`).
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    @contextlib.asynccontextmanager
    async def container(
        self,
        *,
        overrides: Mapping[str, Any] | None = None,
        observers: Sequence["TraceSink"] = (),
        run_observers: Sequence["RunObserver"] = (),
        quiet: bool = False,
        runs_agent: bool = False,
        shared_state: bool = False,
        announce: Callable[[str], None] | None = None,
    ) -> AsyncIterator["AsyncContainer"]:
        """Settings, logging, the state servers, and a container closed before they stop."""
        chosen = dict(overrides or {})
        if quiet and not self._environ.get("LOG_LEVEL"):
            chosen["log_level"] = "WARNING"
        if shared_state and self._environ.get("STATE_BACKEND", "auto") in ("", "auto"):
            chosen["state_backend"] = "embedded"  # what `agentkit serve` uses; configured servers still win
        settings = load_settings(self._environ, **chosen)
        # the provider's settings and the user's tool modules before anything heavy: a missing key
        # or a module that does not import is one line at once
        llm = _preflight(settings) if runs_agent else None
        try:
            async with self._container_on(settings, observers, run_observers, llm, announce) as container:
                yield container
        finally:
            if llm is not None:
                await llm.aclose()

    @contextlib.asynccontextmanager
    async def _container_on(
        self,
        settings: Settings,
        observers: Sequence["TraceSink"],
        run_observers: Sequence["RunObserver"],
        llm: "LLMClient | None",
        announce: Callable[[str], None] | None,
    ) -> AsyncIterator["AsyncContainer"]:
        from dishka import Provider

        from agentkit.entrypoints.wiring.container import make_container
        from agentkit.entrypoints.wiring.logging import configure_logging
        from agentkit.entrypoints.wiring.providers.core import BuiltLLMProvider, ObserversProvider, RunPrintersProvider
        from agentkit.entrypoints.wiring.startup import describe_state, started_state

        configure_logging(settings.logging)
        if announce is not None:
            announce(describe_state(settings))
        async with started_state(settings) as endpoints:
            extra: list[Provider] = [ObserversProvider(observers)]
            if run_observers:
                extra.append(RunPrintersProvider(run_observers))
            if llm is not None:
                extra.append(BuiltLLMProvider(llm))
            container = make_container(settings, *extra, endpoints=endpoints)
            try:
                yield container
            finally:
                await container.close()

    async def serve(self, *, overrides: Mapping[str, Any] | None = None) -> None:
        """Serve the HTTP API until the process is told to stop."""
        settings = self._service_settings(overrides)
        # inline, this process runs the agent: a missing key is one line before a server starts
        llm = _preflight(settings) if settings.loop.run_mode == "inline" else None
        try:
            from agentkit.entrypoints.wiring.serving import serve_http

            await serve_http(settings, llm)
        finally:
            if llm is not None:
                await llm.aclose()

    async def work(self, *, overrides: Mapping[str, Any] | None = None) -> None:
        """Execute queued runs until the process is told to stop."""
        settings = self._service_settings({**(overrides or {}), "run_mode": "queue"})
        llm = _preflight(settings)  # a missing key is one line before a server starts
        try:
            from agentkit.entrypoints.wiring.working import run_worker

            await run_worker(settings, llm)
        finally:
            await llm.aclose()

    def api_endpoint(self) -> tuple[str, str | None]:
        """`http://HOST:PORT` of the settings (a wildcard HOST reached on loopback) and the first of API_KEYS."""
        http = load_settings(self._environ).http
        host = "127.0.0.1" if http.host in ("", "0.0.0.0", "::") else http.host  # noqa: S104 - compared, not bound
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{http.port}", (http.api_keys[0] if http.api_keys else None)

    async def serve_mcp(self) -> None:
        """Serve the agents as MCP tools over stdio (stdout carries the protocol; logs go to stderr)."""
        from agentkit.entrypoints.mcp import serve_stdio

        async with self.container(quiet=True) as container:
            await serve_stdio(container)

    def _service_settings(self, overrides: Mapping[str, Any] | None) -> Settings:
        # a service with no servers configured runs on the embedded ones (`make run`); configured ones win
        chosen = dict(overrides or {})
        if self._environ.get("STATE_BACKEND", "auto") in ("", "auto"):
            chosen["state_backend"] = "embedded"
        return load_settings(self._environ, **chosen)


def _preflight(settings: Settings) -> "LLMClient":
    """The LLM client, once the user's tool modules were found to import (the registry imports them again)."""
    from agentkit.adapters.llm.factory import build_llm_client
    from agentkit.application.tools.discovery import import_tool_modules

    import_tool_modules(settings.tools.agentkit_tool_modules)
    return build_llm_client(settings.llm)
