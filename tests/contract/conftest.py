"""The contract suites run each port against its in-memory adapter and its real one.

`kit` is parametrised: `memory` needs nothing, `real` (marked integration) uses the Postgres and
Redis of `tests/state_fixtures.py`. Both share a FixedClock; `kit.wait(s)` moves it and, for the
real adapters whose time is the servers' own (Redis TTLs), also sleeps. The rate limiter's suite has
a fixture of its own (it also runs the fallback limiter).
"""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunListing,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
)
from agentkit.adapters.postgres import SqlaRunListing, SqlaRunRepository, SqlaTraceSink
from agentkit.adapters.redis import RedisSessionStore
from agentkit.application.ports.prompt_reader import PromptReader
from agentkit.application.ports.run_listing import RunListing
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink


@dataclass
class StateKit:
    """One backend's adapters of every state port, and a way to let time pass."""

    name: str
    clock: FixedClock
    runs: RunRepository
    trace: TraceSink
    reader: TraceReader
    prompts: PromptReader
    listing: RunListing
    make_sessions: Callable[[int, int], SessionStore]

    @property
    def real(self) -> bool:
        """Whether these are the Postgres/Redis adapters."""
        return self.name == "real"

    def sessions(self, *, ttl_s: int = 3600, max_messages: int = 50) -> SessionStore:
        """A session store with this TTL and window."""
        return self.make_sessions(ttl_s, max_messages)

    async def wait(self, seconds: float) -> None:
        """Let `seconds` pass for the adapter under test."""
        self.clock.advance(seconds)
        if self.real:
            await asyncio.sleep(seconds)


def _memory_kit() -> StateKit:
    clock = FixedClock()
    trace = InMemoryTraceSink()
    runs = InMemoryRunRepository()
    return StateKit(
        name="memory",
        clock=clock,
        runs=runs,
        trace=trace,
        reader=trace,
        prompts=trace,
        listing=InMemoryRunListing(runs),
        make_sessions=lambda ttl, size: InMemorySessionStore(clock, ttl_s=ttl, max_messages=size),
    )


def _real_kit(engine: AsyncEngine, redis: Redis, prefix: str) -> StateKit:
    clock = FixedClock()
    trace = SqlaTraceSink(engine)
    return StateKit(
        name="real",
        clock=clock,
        runs=SqlaRunRepository(engine),
        trace=trace,
        reader=trace,
        prompts=trace,
        listing=SqlaRunListing(engine),
        make_sessions=lambda ttl, size: RedisSessionStore(
            redis, clock=clock, ttl_s=ttl, max_messages=size, prefix=prefix
        ),
    )


@pytest.fixture(params=["memory", pytest.param("real", marks=pytest.mark.integration)])
def kit(request: pytest.FixtureRequest) -> StateKit:
    """The adapters of one backend."""
    if request.param == "memory":
        return _memory_kit()
    engine: AsyncEngine = request.getfixturevalue("pg_engine")
    redis: Redis = request.getfixturevalue("redis_client")
    prefix: str = request.getfixturevalue("redis_prefix")
    return _real_kit(engine, redis, prefix)
