"""The HTTP API on real PostgreSQL and Redis, with a scripted LLM and test tools swapped in."""

import asyncio
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
from agentkit.application.settings import Settings, load_settings
from agentkit.application.tools import Tool, ToolRegistry
from agentkit.container import make_container
from agentkit.domain.messages import LLMResponse
from agentkit.entrypoints.http import create_app
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
    """Swaps in the test's LLM and, when given, its tools."""

    def __init__(self, llm: LLMClient, registry: ToolRegistry | None) -> None:
        super().__init__()
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


@pytest.fixture
async def api_factory(
    state_servers: StateServers, pg_engine: AsyncEngine, redis_prefix: str
) -> AsyncIterator[ApiFactory]:
    """Builds the app on the test database and Redis prefix; closes whatever it built."""
    clients: list[ApiClient] = []

    async def build(
        script: Sequence[LLMResponse] = (),
        *,
        llm: LLMClient | None = None,
        tools: Sequence[Tool[..., Any]] | None = (add, lookup),
        **settings: Any,
    ) -> ApiClient:
        env = {
            "DATABASE_URL": state_servers.database_url.render_as_string(hide_password=False),
            "REDIS_URL": state_servers.redis_url,
            "REDIS_KEY_PREFIX": redis_prefix,
            "STATE_BACKEND": "external",
            "API_KEYS": f"{KEY_A},{KEY_B}",
            "LOG_LEVEL": "WARNING",
        }
        config: Settings = load_settings(env, **settings)
        # tools=None keeps the container's own registry: the built-in tools
        registry = None if tools is None else ToolRegistry(tools, default_timeout_s=config.tool_timeout_s)
        container = make_container(config, LitestarProvider(), Overrides(llm or ScriptedLLMClient(script), registry))
        client = ApiClient(create_app(container, config))
        await client.__aenter__()
        clients.append(client)
        return client

    yield build
    for client in reversed(clients):
        if not client.is_closed:
            await client.__aexit__(None, None, None)


def headers(key: str = KEY_A, **extra: str) -> dict[str, str]:
    """Request headers with an API key."""
    return {"X-API-Key": key, **extra}


def session_name() -> str:
    """A session id of this test's own."""
    return "s-" + secrets.token_hex(4)
