"""Start-up as an explicit step: decide where state lives, start the embedded servers, migrate, seed.

The entrypoints call `started_state` before they build the container, and leave it after they close
the container; resolving a dependency never starts a server or changes a database.
"""

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import msgspec
import structlog
from sqlalchemy.engine import URL

from agentkit.adapters.demo import PostgresDemoSeeder
from agentkit.adapters.embedded import EmbeddedServers
from agentkit.adapters.postgres import AlembicSchemaMigrator, create_engine
from agentkit.application.errors import ConfigurationError
from agentkit.entrypoints.wiring.locations import database_url, demo_seed_config
from agentkit.entrypoints.wiring.schema_check import schema_checked
from agentkit.entrypoints.wiring.settings import Settings, StateSettings

_log = structlog.get_logger(__name__)

Backend = Literal["memory", "external", "embedded"]


class StatePlan(msgspec.Struct, frozen=True, kw_only=True):
    """Where runs and traces (postgres) and sessions and rate limits (redis) live."""

    postgres: Backend
    redis: Backend


class StateEndpoints(msgspec.Struct, frozen=True, kw_only=True):
    """The servers the container connects to; None for a store that lives in memory.

    Attributes:
        plan: Where each store lives.
        database_url: AgentKit's database (asyncpg form).
        redis_url: The Redis server.
    """

    plan: StatePlan
    database_url: URL | None = None
    redis_url: str | None = None


IN_MEMORY = StateEndpoints(plan=StatePlan(postgres="memory", redis="memory"))


def plan_state(state: StateSettings) -> StatePlan:
    """Decide each store's backend from STATE_BACKEND and which URLs are set.

    auto: a configured server, else memory. embedded: a configured server, else a private one.
    external: configured servers, both required. memory: memory, whatever is configured.

    Raises:
        ConfigurationError: STATE_BACKEND=external without a database or Redis URL.
    """
    has_db = bool(state.database_url or state.postgres_host)
    has_redis = bool(state.redis_url)
    mode = state.state_backend
    if mode == "memory":
        return StatePlan(postgres="memory", redis="memory")
    if mode == "external":
        if not has_db:
            raise ConfigurationError("DATABASE_URL: required when STATE_BACKEND=external (or set POSTGRES_HOST)")
        if not has_redis:
            raise ConfigurationError("REDIS_URL: required when STATE_BACKEND=external")
    fallback: Backend = "embedded" if mode == "embedded" else "memory"
    return StatePlan(postgres="external" if has_db else fallback, redis="external" if has_redis else fallback)


def locate_state(settings: Settings) -> StateEndpoints:
    """The endpoints of configured servers, where nothing has to be started (no embedded server planned).

    Raises:
        ConfigurationError: the plan needs an embedded server (use `started_state`).
    """
    state = settings.state
    plan = plan_state(state)
    if "embedded" in (plan.postgres, plan.redis):
        raise ConfigurationError("STATE_BACKEND=embedded: the private servers must be started (started_state)")
    return StateEndpoints(
        plan=plan,
        database_url=database_url(state) if plan.postgres == "external" else None,
        redis_url=state.redis_url if plan.redis == "external" else None,
    )


def describe_state(settings: Settings) -> str:
    """Where this process's state lives, in one line for a person (no password shown).

    For example "state: embedded PostgreSQL and Redis in /srv/app/.agentkit (the data `agentkit serve` uses)".
    """
    state = settings.state
    plan = plan_state(state)
    folder = Path(state.agentkit_data_dir).resolve()
    if plan.postgres == plan.redis == "embedded":
        return f"state: embedded PostgreSQL and Redis in {folder} (the data `agentkit serve` uses)"
    if plan.postgres == plan.redis == "memory":
        return "state: in memory, gone when the command ends (set DATABASE_URL, or STATE_BACKEND=embedded)"
    where = {"memory": "in memory", "embedded": f"embedded in {folder}"}
    url = database_url(state)
    postgres = where.get(plan.postgres) or (
        url.set(drivername="postgresql").render_as_string(hide_password=True) if url else "?"
    )
    redis = where.get(plan.redis) or _hide_password(state.redis_url or "?")
    return f"state: PostgreSQL {postgres}, Redis {redis}"


def _hide_password(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in credentials:
        return url
    return f"{scheme}://{credentials.partition(':')[0]}:***@{host}"


@contextlib.asynccontextmanager
async def started_state(settings: Settings, *, check_schema: bool = False) -> AsyncIterator[StateEndpoints]:
    """Where state lives, with the embedded servers running for as long as the block runs.

    A private (embedded) PostgreSQL is migrated and its demo database seeded here: nobody else would.
    A configured server is located; `agentkit migrate` and `agentkit seed-demo` set it up. With
    `check_schema` (the services: `agentkit serve`, `agentkit worker`) its schema must be this
    release's, or behind it with MIGRATE_ON_START set, which migrates it here (see `schema_check`).

    Raises:
        SchemaMismatch: with `check_schema`, a configured database whose schema the code does not match.
        StoreUnavailable: with `check_schema`, a configured database that could not be read.
    """
    state = settings.state
    plan = plan_state(state)
    embedded = EmbeddedServers(Path(state.agentkit_data_dir))
    try:
        db_url: URL | None = None
        if plan.postgres == "embedded":
            db_url = await embedded.start_postgres(state.postgres_db)
            await _migrate(db_url)
            summary = await PostgresDemoSeeder(db_url, demo_seed_config(state, settings.tools)).seed()
            _log.info("demo_seeded", summary=summary)
        elif plan.postgres == "external":
            db_url = database_url(state)
            if check_schema and db_url is not None:
                await schema_checked(db_url, state)
        redis_url: str | None = None
        if plan.redis == "embedded":
            redis_url = await embedded.start_redis()
        elif plan.redis == "external":
            redis_url = state.redis_url
        _log.info("state_ready", postgres=plan.postgres, redis=plan.redis)
        yield StateEndpoints(plan=plan, database_url=db_url, redis_url=redis_url)
    finally:
        await embedded.stop()


async def _migrate(url: URL) -> None:
    engine = create_engine(url, pool_size=1, max_overflow=0, statement_timeout_s=None)  # DDL may take long
    try:
        await AlembicSchemaMigrator(engine).upgrade()
    finally:
        await engine.dispose()
