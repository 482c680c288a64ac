"""State adapters chosen from the settings: Postgres and Redis, the embedded servers, or memory.

`plan_state(settings)` decides, per store, where state lives (see Settings.state_backend);
`StateProvider` starts what the plan needs once per container (APP scope) and closes it, last
opened first, when the container closes.
"""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import msgspec
import structlog
from dishka import AnyOf, Provider, Scope, provide
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.demo.seeder import PostgresDemoSeeder
from agentkit.adapters.embedded import EmbeddedServers
from agentkit.adapters.fallback_rate_limiter import FallbackRateLimiter
from agentkit.adapters.memory import InMemoryRateLimiter, InMemoryRunRepository, InMemorySessionStore, InMemoryTraceSink
from agentkit.adapters.memory.schema_migrator import InMemorySchemaMigrator
from agentkit.adapters.postgres import AlembicSchemaMigrator, SqlaRunRepository, SqlaTraceSink, create_engine
from agentkit.adapters.postgres import database_url as configured_database_url
from agentkit.adapters.redis import RedisRateLimiter, RedisSessionStore, create_redis
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.schema_migrator import SchemaMigrator
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.settings import Settings

_log = structlog.get_logger(__name__)

Backend = Literal["memory", "external", "embedded"]


class StatePlan(msgspec.Struct, frozen=True, kw_only=True):
    """Where runs and traces (postgres) and sessions and rate limits (redis) live."""

    postgres: Backend
    redis: Backend


def plan_state(settings: Settings) -> StatePlan:
    """Decide each store's backend from STATE_BACKEND and which URLs are set.

    auto: a configured server, else memory. embedded: a configured server, else a private one.
    external: configured servers, both required. memory: memory, whatever is configured.

    Raises:
        ConfigurationError: STATE_BACKEND=external without a database or Redis URL.
    """
    has_db = bool(settings.database_url or settings.postgres_host)
    has_redis = bool(settings.redis_url)
    mode = settings.state_backend
    if mode == "memory":
        return StatePlan(postgres="memory", redis="memory")
    if mode == "external":
        if not has_db:
            raise ConfigurationError("DATABASE_URL: required when STATE_BACKEND=external (or set POSTGRES_HOST)")
        if not has_redis:
            raise ConfigurationError("REDIS_URL: required when STATE_BACKEND=external")
    fallback: Backend = "embedded" if mode == "embedded" else "memory"
    return StatePlan(
        postgres="external" if has_db else fallback,
        redis="external" if has_redis else fallback,
    )


class StateConnections:
    """The open engine and Redis client, or None for a store that lives in memory (and Redis's URL, for probes)."""

    def __init__(self, engine: AsyncEngine | None, redis: Redis | None, redis_url: str | None = None) -> None:
        self.engine = engine
        self.redis = redis
        self.redis_url = redis_url


class StateProvider(Provider):
    """Binds RunRepository, TraceSink, TraceReader, SessionStore, RateLimiter and SchemaMigrator.

    Needs `Settings` and `Clock` from another provider. Embedded servers are started lazily, the
    first time a state port is asked for, and their database is migrated then (it is private, so
    nobody else would); a configured server is migrated by `agentkit migrate`.
    """

    scope = Scope.APP

    @provide
    def plan(self, settings: Settings) -> StatePlan:
        """The backend of each store."""
        return plan_state(settings)

    @provide
    async def connections(self, settings: Settings, plan: StatePlan) -> AsyncIterator[StateConnections]:
        """Start embedded servers if planned, open the engine and the Redis client; close all on exit."""
        embedded = EmbeddedServers(Path(settings.agentkit_data_dir))
        engine: AsyncEngine | None = None
        redis: Redis | None = None
        redis_url: str | None = None
        try:
            if plan.postgres != "memory":
                url = (
                    await embedded.start_postgres(settings.postgres_db)
                    if plan.postgres == "embedded"
                    else configured_database_url(settings)
                )
                assert url is not None  # noqa: S101 - plan_state saw a URL or POSTGRES_HOST
                engine = create_engine(
                    url,
                    pool_size=settings.database_pool_size,
                    max_overflow=settings.database_max_overflow,
                    connect_timeout_s=settings.database_connect_timeout_s,
                    pool_timeout_s=settings.database_pool_timeout_s,
                    statement_timeout_s=settings.database_statement_timeout_s,
                )
                if plan.postgres == "embedded":
                    await AlembicSchemaMigrator(engine).upgrade()
                    # the private server is ours: give sql_readonly its demo database right away
                    _log.info("demo_seeded", summary=await PostgresDemoSeeder(url, settings).seed())
            if plan.redis != "memory":
                redis_url = await embedded.start_redis() if plan.redis == "embedded" else settings.redis_url
                assert redis_url is not None  # noqa: S101 - plan_state saw REDIS_URL
                redis = create_redis(
                    redis_url,
                    password=settings.redis_password,
                    socket_timeout_s=settings.redis_socket_timeout_s,
                    connect_timeout_s=settings.redis_connect_timeout_s,
                )
            _log.info("state_ready", postgres=plan.postgres, redis=plan.redis)
            yield StateConnections(engine, redis, redis_url)
        finally:
            if redis is not None:
                await redis.aclose()
            if engine is not None:
                await engine.dispose()
            await embedded.stop()

    @provide
    def runs(self, conns: StateConnections) -> RunRepository:
        """Runs in Postgres, or in memory."""
        return InMemoryRunRepository() if conns.engine is None else SqlaRunRepository(conns.engine)

    @provide(provides=AnyOf[TraceSink, TraceReader])
    async def trace(
        self, conns: StateConnections, settings: Settings
    ) -> AsyncIterator[SqlaTraceSink | InMemoryTraceSink]:
        """One trace store behind both trace ports; the Postgres one writes what it queued on close."""
        if conns.engine is None:
            yield InMemoryTraceSink()
            return
        sink = SqlaTraceSink(conns.engine, write_timeout_s=settings.trace_write_timeout_s)
        try:
            yield sink
        finally:
            await sink.aclose()  # bounded: steps still unwritten with the store down are logged as lost

    @provide
    def sessions(self, conns: StateConnections, settings: Settings, clock: Clock) -> SessionStore:
        """Sessions in Redis, or in memory."""
        if conns.redis is None:
            return InMemorySessionStore(clock, ttl_s=settings.session_ttl_s, max_messages=settings.session_max_messages)
        return RedisSessionStore(
            conns.redis,
            clock=clock,
            ttl_s=settings.session_ttl_s,
            max_messages=settings.session_max_messages,
            prefix=settings.redis_key_prefix,
        )

    @provide
    def rate_limiter(self, conns: StateConnections, settings: Settings, clock: Clock) -> RateLimiter:
        """Rate-limit windows in Redis (in this process's memory while Redis is down), or in memory."""
        if conns.redis is None:
            return InMemoryRateLimiter(clock)
        # a Redis outage loosens the limits to per process rather than refusing every request they guard
        shared = RedisRateLimiter(conns.redis, prefix=settings.redis_key_prefix)
        return FallbackRateLimiter(shared, InMemoryRateLimiter(clock), clock=clock)

    @provide
    def migrator(self, conns: StateConnections) -> SchemaMigrator:
        """Alembic for Postgres; nothing to do for memory."""
        return InMemorySchemaMigrator() if conns.engine is None else AlembicSchemaMigrator(conns.engine)
