"""Fixtures for HTTP tests: the app on in-memory state (fast) or on real PostgreSQL and Redis.

Registered from the root conftest (`pytest_plugins`). A test module picks its state by the factory
it asks for (`memory_api_factory`, `real_api_factory`); `api_factory` is bound by each folder's conftest.
"""

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import pytest
from dishka import Provider, Scope
from dishka.integrations.litestar import LitestarProvider
from litestar import Litestar
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.tools import Tool, ToolRegistry
from agentkit.domain.messages import LLMResponse
from agentkit.entrypoints.wiring import make_container, started_state
from agentkit.entrypoints.wiring.serving import build_http_app
from agentkit.entrypoints.wiring.settings import load_settings
from tests.sample_tools import add, lookup
from tests.state_fixtures import StateServers

KEY_A = "key-a-" + "x" * 20
KEY_B = "key-b-" + "y" * 20


@dataclass
class Gate:
    """Holds a `wait_for_gate` tool call until the test opens it."""

    entered: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event = field(default_factory=asyncio.Event)


class Overrides(Provider):
    """Swaps in the test's LLM (none: the one LLM_PROVIDER names) and, when given, its tools."""

    def __init__(self, llm: LLMClient | None, registry: ToolRegistry | None) -> None:
        super().__init__()
        if llm is not None:
            self.provide(lambda: llm, provides=LLMClient, scope=Scope.APP)
        if registry is not None:
            self.provide(lambda: registry, provides=ToolRegistry, scope=Scope.APP)


class ApiClient(httpx.AsyncClient):
    """The app on the test's own event loop: requests go through httpx's ASGI transport, and the app's
    lifespan (the scheduler, the sweeper, the container) is entered and left here.

    Litestar's AsyncTestClient runs the app on a portal thread with an event loop of its own: an
    asyncio.Event shared with a test's tool was then set from another thread and woke no one until
    some timeout fired, which made tests slow and, on a loaded machine, flaky.
    """

    def __init__(self, app: Litestar) -> None:
        # Litestar types its ASGI callable more narrowly than httpx; it is a standard ASGI app
        super().__init__(transport=httpx.ASGITransport(app=cast(Any, app)), base_url="http://testserver")
        self.app = app
        self._started = asyncio.Event()
        self._stop = asyncio.Event()
        self._lifespan: asyncio.Task[None] | None = None

    async def _run_lifespan(self) -> None:
        # one task enters and leaves the lifespan, as a server does (anyio scopes inside insist on it)
        async with self.app.lifespan():
            self._started.set()
            await self._stop.wait()

    async def __aenter__(self) -> "ApiClient":
        self._lifespan = asyncio.create_task(self._run_lifespan())
        started = asyncio.create_task(self._started.wait())
        await asyncio.wait({self._lifespan, started}, return_when=asyncio.FIRST_COMPLETED)
        if self._lifespan.done():
            started.cancel()
            await self._lifespan  # start-up failed: raise its error
        await super().__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await super().__aexit__(*exc_info)
        self._stop.set()
        if self._lifespan is not None:
            await self._lifespan


ApiFactory = Callable[..., Awaitable[ApiClient]]


@contextlib.asynccontextmanager
async def _factory(base_env: dict[str, str]) -> AsyncIterator[ApiFactory]:
    """Builds apps on `base_env` (plus each call's settings); closes whatever it built, then the state."""
    clients: list[ApiClient] = []
    async with contextlib.AsyncExitStack() as stack:

        async def build(
            script: Sequence[LLMResponse] = (),
            *,
            llm: LLMClient | None = None,
            tools: Sequence[Tool[..., Any]] | None = (add, lookup),
            providers: Sequence[Provider] = (),
            llm_from_settings: bool = False,
            **settings: Any,
        ) -> ApiClient:
            env = {**base_env, "API_KEYS": f"{KEY_A},{KEY_B}", "LOG_LEVEL": "WARNING"}
            config = load_settings(env, **settings)
            endpoints = await stack.enter_async_context(started_state(config))
            # tools=None keeps the container's own registry: the built-in tools
            registry = None if tools is None else ToolRegistry(tools, default_timeout_s=config.tools.tool_timeout_s)
            overrides = Overrides(None if llm_from_settings else llm or ScriptedLLMClient(script), registry)
            container = make_container(config, LitestarProvider(), overrides, *providers, endpoints=endpoints)
            client = ApiClient(await build_http_app(container))
            await client.__aenter__()
            clients.append(client)
            return client

        yield build
        for client in reversed(clients):
            if not client.is_closed:
                await client.__aexit__(None, None, None)


@pytest.fixture
async def memory_api_factory() -> AsyncIterator[ApiFactory]:
    """Builds the app on in-memory state: no server, nothing shared with other tests."""
    async with _factory({"STATE_BACKEND": "memory"}) as build:
        yield build


@pytest.fixture
async def real_api_factory(
    state_servers: StateServers, pg_engine: AsyncEngine, redis_prefix: str
) -> AsyncIterator[ApiFactory]:
    """Builds the app on the test database (emptied first) and a Redis key prefix of the test's own."""
    env = {
        "DATABASE_URL": state_servers.database_url.render_as_string(hide_password=False),
        "REDIS_URL": state_servers.redis_url,
        "REDIS_KEY_PREFIX": redis_prefix,
        "STATE_BACKEND": "external",
    }
    async with _factory(env) as build:
        yield build


def headers(key: str = KEY_A, **extra: str) -> dict[str, str]:
    """Request headers with an API key."""
    return {"X-API-Key": key, **extra}


def session_name() -> str:
    """A session id of this test's own."""
    return "s-" + secrets.token_hex(4)
