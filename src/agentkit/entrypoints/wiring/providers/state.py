"""State adapters on the servers start-up located: PostgreSQL and Redis, or memory where there is none.

The provider only connects: the servers are already running (see `startup.started_state`). Clients
open once per container (APP scope) and close, last opened first, when the container closes.
"""

from collections.abc import AsyncIterator

import msgspec
from dishka import AnyOf, Provider, Scope, from_context, provide
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.fallback_rate_limiter import FallbackRateLimiter
from agentkit.adapters.memory import (
    InMemoryRateLimiter,
    InMemoryRunEventLog,
    InMemoryRunEvents,
    InMemoryRunListing,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
)
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunListing,
    SqlaRunRepository,
    SqlaTraceSink,
    create_engine,
)
from agentkit.adapters.redis import (
    RedisRateLimiter,
    RedisRunEventLog,
    RedisRunEvents,
    RedisSessionStore,
    create_redis,
)
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.prompt_reader import PromptReader
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_event_log import RunEventLog
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_listing import RunListing
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.schema_migrator import SchemaMigrator
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.entrypoints.wiring.settings import Settings
from agentkit.entrypoints.wiring.startup import StateEndpoints


class StateConnections(msgspec.Struct, frozen=True, kw_only=True):
    """The open engine and Redis clients, or None for a store that lives in memory.

    `event_readers` is a Redis client of its own for reads that wait (the followers of runs): each
    holds a connection while it waits, longer than the service's reply timeout allows.
    """

    engine: AsyncEngine | None = None
    redis: Redis | None = None
    event_readers: Redis | None = None


def event_read_block_s(settings: Settings) -> float:
    """How long one read of a run's events waits: until a keep-alive is due (SSE_KEEPALIVE_S)."""
    return settings.http.sse_keepalive_s


class StateProvider(Provider):
    """Binds RunRepository, RunListing, TraceSink, TraceReader, PromptReader, SessionStore, RateLimiter,
    RunEvents, RunEventLog and SchemaMigrator."""

    scope = Scope.APP
    endpoints = from_context(provides=StateEndpoints, scope=Scope.APP)

    @provide
    async def connections(self, settings: Settings, endpoints: StateEndpoints) -> AsyncIterator[StateConnections]:
        """Open the engine and the Redis client the endpoints name; close both on exit."""
        state = settings.state
        engine: AsyncEngine | None = None
        redis: Redis | None = None
        readers: Redis | None = None
        try:
            if endpoints.database_url is not None:
                engine = create_engine(
                    endpoints.database_url,
                    pool_size=state.database_pool_size,
                    max_overflow=state.database_max_overflow,
                    connect_timeout_s=state.database_connect_timeout_s,
                    pool_timeout_s=state.database_pool_timeout_s,
                    statement_timeout_s=state.database_statement_timeout_s,
                )
            if endpoints.redis_url is not None:
                redis = create_redis(
                    endpoints.redis_url,
                    password=state.redis_password,
                    socket_timeout_s=state.redis_socket_timeout_s,
                    connect_timeout_s=state.redis_connect_timeout_s,
                )
                readers = create_redis(
                    endpoints.redis_url,
                    password=state.redis_password,
                    socket_timeout_s=event_read_block_s(settings) + state.redis_socket_timeout_s,
                    connect_timeout_s=state.redis_connect_timeout_s,
                    max_connections=state.run_events_readers,
                )
            yield StateConnections(engine=engine, redis=redis, event_readers=readers)
        finally:
            if readers is not None:
                await readers.aclose()
            if redis is not None:
                await redis.aclose()
            if engine is not None:
                await engine.dispose()

    @provide
    def memory_runs(self, settings: Settings) -> InMemoryRunRepository:
        """The runs of state in memory (the repository and its listing share them), bounded by MEMORY_MAX_RUNS."""
        return InMemoryRunRepository(max_finished=settings.state.memory_max_runs)

    @provide
    def runs(self, conns: StateConnections, memory: InMemoryRunRepository) -> RunRepository:
        """Runs in Postgres, or in memory."""
        return memory if conns.engine is None else SqlaRunRepository(conns.engine)

    @provide
    def run_listing(self, conns: StateConnections, memory: InMemoryRunRepository) -> RunListing:
        """Pages of runs, from where the runs are."""
        return InMemoryRunListing(memory) if conns.engine is None else SqlaRunListing(conns.engine)

    @provide(provides=AnyOf[TraceSink, TraceReader, PromptReader])
    async def trace(
        self, conns: StateConnections, settings: Settings, memory: InMemoryRunRepository
    ) -> AsyncIterator[SqlaTraceSink | InMemoryTraceSink]:
        """One trace store behind both trace ports; the Postgres one writes what it queued on close."""
        if conns.engine is None:
            kept = InMemoryTraceSink()
            memory.on_forget(kept.forget)  # a run the repository forgets takes its trace with it
            yield kept
            return
        sink = SqlaTraceSink(conns.engine, write_timeout_s=settings.state.trace_write_timeout_s)
        try:
            yield sink
        finally:
            await sink.aclose()  # bounded: steps still unwritten with the store down are logged as lost

    @provide
    def sessions(self, conns: StateConnections, settings: Settings, clock: Clock) -> SessionStore:
        """Sessions in Redis, or in memory."""
        state = settings.state
        if conns.redis is None:
            return InMemorySessionStore(clock, ttl_s=state.session_ttl_s, max_messages=state.session_max_messages)
        return RedisSessionStore(
            conns.redis,
            clock=clock,
            ttl_s=state.session_ttl_s,
            max_messages=state.session_max_messages,
            prefix=state.redis_key_prefix,
        )

    @provide
    def rate_limiter(self, conns: StateConnections, settings: Settings, clock: Clock) -> RateLimiter:
        """Rate-limit windows in Redis (in this process's memory while Redis is down), or in memory."""
        if conns.redis is None:
            return InMemoryRateLimiter(clock)
        # a Redis outage loosens the limits to per process rather than refusing every request they guard
        shared = RedisRateLimiter(conns.redis, prefix=settings.state.redis_key_prefix)
        return FallbackRateLimiter(shared, InMemoryRateLimiter(clock), clock=clock)

    @provide
    async def events(self, conns: StateConnections, settings: Settings) -> AsyncIterator[RunEvents]:
        """Run ends and cancels on Redis pub/sub (every process hears them), or within this process."""
        events: RunEvents = (
            InMemoryRunEvents()
            if conns.redis is None
            else RedisRunEvents(conns.redis, prefix=settings.state.redis_key_prefix)
        )
        try:
            yield events
        finally:
            await events.aclose()

    @provide
    async def event_log(
        self, conns: StateConnections, settings: Settings, memory: InMemoryRunRepository
    ) -> AsyncIterator[RunEventLog]:
        """Each run's live events in Redis streams (every process reads them), or in this process's memory."""
        state = settings.state
        log: RunEventLog
        if conns.redis is None:
            kept = InMemoryRunEventLog(max_len=state.run_events_max_len)
            memory.on_forget(kept.forget)
            log = kept
        else:
            log = RedisRunEventLog(
                conns.redis,
                reader=conns.event_readers,
                prefix=state.redis_key_prefix,
                max_len=state.run_events_max_len,
                ttl_s=state.run_events_ttl_s,
                max_block_s=event_read_block_s(settings),
            )
        try:
            yield log
        finally:
            await log.aclose()  # bounded: what Redis does not take in time is logged as dropped

    @provide
    def migrator(self, conns: StateConnections) -> SchemaMigrator:
        """Alembic on AgentKit's PostgreSQL (state in memory has no schema to migrate)."""
        if conns.engine is None:
            raise ConfigurationError("DATABASE_URL: migrate needs PostgreSQL (set DATABASE_URL or POSTGRES_HOST)")
        return AlembicSchemaMigrator(conns.engine)
