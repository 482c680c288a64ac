"""StateProvider: the container binds the state ports to memory, to configured servers, or to embedded ones."""

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dishka import AsyncContainer

from agentkit.adapters.fallback_rate_limiter import FallbackRateLimiter
from agentkit.adapters.memory import InMemoryRunRepository, InMemorySessionStore, InMemoryTraceSink
from agentkit.adapters.postgres import SqlaRunRepository, SqlaTraceSink
from agentkit.adapters.redis import RedisSessionStore
from agentkit.application.errors import ConfigurationError
from agentkit.application.observation import ObservedRunRepository
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.schema_migrator import SchemaMigrator
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.messages import Message
from agentkit.domain.run import Run
from agentkit.entrypoints.wiring import make_container, started_state
from agentkit.entrypoints.wiring.providers.state import StateConnections
from agentkit.entrypoints.wiring.settings import load_settings
from tests.state_fixtures import StateServers


@asynccontextmanager
async def container(**settings: Any) -> AsyncIterator[AsyncContainer]:
    """The root's container on the state these settings name, started as the entrypoints start it."""
    config = load_settings({}, **settings)
    async with started_state(config) as endpoints:
        built = make_container(config, endpoints=endpoints)
        try:
            yield built
        finally:
            await built.close()


def stored_runs(runs: RunRepository) -> RunRepository:
    """The repository that stores the runs (metrics, on by default, observe it through a wrapper)."""
    assert isinstance(runs, ObservedRunRepository)
    return runs.inner


async def test_without_servers_every_port_is_in_memory_and_both_trace_ports_are_one_store() -> None:
    async with container(state_backend="auto") as c:
        assert isinstance(stored_runs(await c.get(RunRepository)), InMemoryRunRepository)
        assert isinstance(await c.get(SessionStore), InMemorySessionStore)
        sink, reader = await c.get(TraceSink), await c.get(TraceReader)
        assert isinstance(sink, InMemoryTraceSink)
        assert sink is reader
        with pytest.raises(ConfigurationError, match="migrate needs PostgreSQL"):
            await c.get(SchemaMigrator)


@pytest.mark.integration
async def test_with_urls_the_ports_are_postgres_and_redis(state_servers: StateServers) -> None:
    url = state_servers.database_url.render_as_string(hide_password=False)
    async with container(state_backend="external", database_url=url, redis_url=state_servers.redis_url) as c:
        assert isinstance(stored_runs(await c.get(RunRepository)), SqlaRunRepository)
        assert isinstance(await c.get(TraceSink), SqlaTraceSink)
        assert await c.get(TraceSink) is await c.get(TraceReader)
        assert isinstance(await c.get(SessionStore), RedisSessionStore)
        assert isinstance(await c.get(RateLimiter), FallbackRateLimiter)  # Redis, the process while it is down
        assert await (await c.get(SchemaMigrator)).current() == "0012"


@pytest.mark.integration
async def test_the_embedded_servers_keep_their_data_across_a_restart_and_stop_on_close(tmp_path: Path) -> None:
    data_dir = tmp_path / "agentkit-data"
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("k"), goal="remember me", created_at=datetime.now(UTC))
    history = [Message(role="user", content="hello")]

    async with container(state_backend="embedded", agentkit_data_dir=str(data_dir)) as c:
        await (await c.get(RunRepository)).add(run)
        await (await c.get(SessionStore)).save(OwnerId("k"), SessionId("s"), history)
        assert await (await c.get(SchemaMigrator)).current() == "0012"
        conns = await c.get(StateConnections)
        assert conns.redis is not None
        redis_socket = conns.redis.connection_pool.connection_kwargs["path"]
        assert _present(data_dir, redis_socket) == {"postmaster.pid": True, "redis socket": True, "rdb": False}

    # Both stopped cleanly: PostgreSQL removes its pid file, Redis its socket and leaves a snapshot.
    assert _present(data_dir, redis_socket) == {"postmaster.pid": False, "redis socket": False, "rdb": True}

    async with container(state_backend="embedded", agentkit_data_dir=str(data_dir)) as c:
        assert await (await c.get(RunRepository)).get(run.id) == run
        assert await (await c.get(SessionStore)).load(OwnerId("k"), SessionId("s")) == history


def _present(data_dir: Path, redis_socket: str) -> dict[str, bool]:
    """Which of the files that tell a running server from a stopped one exist."""
    return {
        "postmaster.pid": (data_dir / "postgres" / "postmaster.pid").exists(),
        "redis socket": Path(redis_socket).exists(),
        "rdb": (data_dir / "redis" / "agentkit.rdb").exists(),
    }
