"""The whole app on a real loopback port, served by uvicorn in a thread of its own (its own event loop).

A browser needs a real server; a thread (not a process) lets the tests hand it their model and tools.
State is in memory: nothing outlives the server.
"""

import asyncio
import socket
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import uvicorn
from dishka.integrations.litestar import LitestarProvider

from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.tools import Tool, ToolRegistry
from agentkit.entrypoints.wiring import make_container, started_state
from agentkit.entrypoints.wiring.serving import build_http_app
from agentkit.entrypoints.wiring.settings import load_settings
from tests.http_fixtures import Overrides

START_TIMEOUT_S = 120.0  # a cold start on a loaded 2-core machine


class LiveApi:
    """`start()` serves the app on 127.0.0.1 (a free port), `stop()` ends it; `base_url` names it."""

    def __init__(self, env: Mapping[str, str], llm: LLMClient, tools: Sequence[Tool[..., Any]]) -> None:
        self._env = {"STATE_BACKEND": "memory", "LOG_LEVEL": "WARNING", **env}
        self._llm = llm
        self._tools = tools
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._ready = threading.Event()
        self._server: uvicorn.Server | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="live-api", daemon=True)

    def start(self) -> "LiveApi":
        """Serve, and return once the server listens."""
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise AssertionError(f"the API did not start in {START_TIMEOUT_S:g} s")
        if self._failure is not None:
            raise AssertionError(f"the API failed to start: {self._failure!r}")
        return self

    def stop(self) -> None:
        """Stop serving (the app's shutdown runs) and wait for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        self._thread.join(timeout=60)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported by start()
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        settings = load_settings(self._env)
        async with started_state(settings) as endpoints:
            registry = ToolRegistry(self._tools, default_timeout_s=settings.tools.tool_timeout_s)
            container = make_container(
                settings, LitestarProvider(), Overrides(self._llm, registry), endpoints=endpoints
            )
            app = await build_http_app(container)
            # no log_config or log_level: uvicorn would set its loggers' levels for the whole test process
            config = uvicorn.Config(
                app, log_config=None, log_level=None, access_log=False, lifespan="on", timeout_graceful_shutdown=5
            )
            self._server = _Server(config, started=self._ready)
            await self._server.serve(sockets=[self._socket])


class _Server(uvicorn.Server):
    """uvicorn that says when it listens."""

    def __init__(self, config: uvicorn.Config, *, started: threading.Event) -> None:
        super().__init__(config)
        self._started = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up, then tell the waiting test."""
        await super().startup(sockets=sockets)
        self._started.set()
