"""The API served by uvicorn on a loopback port, in a thread of its own: what a real client reaches.

The in-process test client hides what only a real socket carries (header bytes that are not UTF-8,
raw paths); tests that need those use `served_api`.
"""

import asyncio
import secrets
import socket
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
import uvicorn
from dishka.integrations.litestar import LitestarProvider
from sqlalchemy import text

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.postgres import create_engine
from agentkit.adapters.redis import create_redis
from agentkit.application.tools import ToolRegistry
from agentkit.domain.messages import LLMResponse
from agentkit.entrypoints.wiring import locate_state, make_container
from agentkit.entrypoints.wiring.serving import http_app
from agentkit.entrypoints.wiring.settings import load_settings
from tests.http_fixtures import KEY_A, Overrides
from tests.sample_tools import add, lookup
from tests.state_fixtures import StateServers

T = TypeVar("T")
# a high rate limit, so requests reach the handlers; a short wait, as runs end in milliseconds
# Limits out of reach: schemathesis sends thousands of requests, hundreds with wrong keys on purpose (its
# auth checks want a 401 for each), and the limits have tests of their own (test_overload_and_limits.py).
SETTINGS: dict[str, Any] = {
    "rate_limit_per_min": 1_000_000,
    "auth_failures_per_min": 1_000_000,
    "response_timeout_s": 2.0,
}


class ServedApi:
    """The app under uvicorn in a thread of its own, with its own event loop, on a loopback socket."""

    def __init__(self, state: StateServers) -> None:
        self.prefix = f"agentkit-test:{secrets.token_hex(8)}:"
        env = {
            "DATABASE_URL": state.database_url.render_as_string(hide_password=False),
            "REDIS_URL": state.redis_url,
            "REDIS_KEY_PREFIX": self.prefix,
            "STATE_BACKEND": "external",
            "API_KEYS": KEY_A,
            "LOG_LEVEL": "WARNING",
        }
        self.settings = load_settings(env, **SETTINGS)
        self._state = state
        llm = ScriptedLLMClient([LLMResponse(text="done")], per_conversation=True)
        llm.record_requests = False
        registry = ToolRegistry([add, lookup], default_timeout_s=self.settings.tools.tool_timeout_s)
        endpoints = locate_state(self.settings)
        container = make_container(self.settings, LitestarProvider(), Overrides(llm, registry), endpoints=endpoints)
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        # log_config=None as `agentkit serve` does: uvicorn's own config would rewire the process's loggers
        config = uvicorn.Config(http_app(container, self.settings), log_config=None, lifespan="on")
        self._server = uvicorn.Server(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="served-api", daemon=True)
        self._engine = create_engine(state.database_url, pool_size=1, max_overflow=0)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._server.serve(sockets=[self._socket]))
        finally:
            leftover = asyncio.all_tasks(self._loop)
            for task in leftover:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
            self._loop.close()

    def start(self) -> None:
        self._thread.start()
        for _ in range(600):  # up to 60 s on a loaded machine
            if self._server.started:
                return
            threading.Event().wait(0.1)
        raise RuntimeError("the API did not start")

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's loop (where its engine lives) and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=60)

    async def count_runs(self) -> int:
        """Rows in `runs`."""
        async with self._engine.connect() as conn:
            return int((await conn.execute(text("SELECT count(*) FROM runs"))).scalar_one())

    async def forget_runs(self) -> None:
        async with self._engine.begin() as conn:
            await conn.execute(text("TRUNCATE runs, steps, run_messages, run_tool_sets, webhook_deliveries"))

    async def _clean_up(self) -> None:
        await self._engine.dispose()
        redis = create_redis(self._state.redis_url)
        keys = [key async for key in redis.scan_iter(match=f"{self.prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()

    def stop(self) -> None:
        self.run(self._clean_up())
        self._server.should_exit = True
        self._thread.join(timeout=60)
        self._socket.close()


@pytest.fixture(scope="module")
def served_api(state_servers: StateServers) -> Iterator[ServedApi]:
    """The API on a loopback port for this module's tests."""
    served = ServedApi(state_servers)
    served.start()
    yield served
    served.stop()
