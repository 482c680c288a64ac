"""Fixtures for tests that need PostgreSQL and Redis: the servers in DATABASE_URL / REDIS_URL, else embedded ones.

Registered from the root conftest with `pytest_plugins = ["tests.state_fixtures"]`.

- `state_servers` (session): a fresh, migrated database `agentkit_test_*` on the server (dropped at the
  end, so the server's own databases are never touched) and a Redis URL. Without DATABASE_URL or
  REDIS_URL it starts the embedded servers from the `embedded` extra in a temporary folder.
- `pg_engine`: an engine on that database, its tables emptied before the test.
- `redis_client` and `redis_prefix`: a client, and a key prefix of the test's own whose keys are
  deleted after it.
"""

import asyncio
import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.embedded import EmbeddedPostgres, EmbeddedRedis
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.redis import create_redis


@dataclass(frozen=True)
class StateServers:
    """Where the tests' state lives.

    Attributes:
        server_url: The PostgreSQL server, its maintenance database.
        database_url: The tests' own migrated database on that server.
        redis_url: The Redis server.
        embedded: Whether the servers were started by the tests (no URLs in the environment).
    """

    server_url: URL
    database_url: URL
    redis_url: str
    embedded: bool


async def create_migrated_database(server_url: URL, name: str) -> URL:
    """Create database `name` and migrate it to head; return its URL."""
    url = await create_database(server_url, name)
    engine = create_engine(url, pool_size=1, max_overflow=0)
    try:
        await AlembicSchemaMigrator(engine).upgrade()
    finally:
        await engine.dispose()
    return url


def unique_name(kind: str) -> str:
    """A database name no other test run uses."""
    return f"agentkit_{kind}_{os.getpid()}_{secrets.token_hex(4)}"


@pytest.fixture(scope="session")
def state_servers() -> Iterator[StateServers]:
    """The servers and the tests' database, for the whole session."""
    started: list[EmbeddedPostgres | EmbeddedRedis] = []
    # Not under pytest's basetemp: a server's data must outlive nothing but this fixture, whatever
    # other pytest sessions on the machine do to their numbered temporary folders.
    data_dir = Path(tempfile.mkdtemp(prefix="agentkit-test-state-"))
    try:
        if os.environ.get("DATABASE_URL"):
            server_url = parse_database_url(os.environ["DATABASE_URL"])
        else:
            postgres = EmbeddedPostgres(data_dir / "postgres")
            started.append(postgres)
            server_url = postgres.start()
        if os.environ.get("REDIS_URL"):
            redis_url = os.environ["REDIS_URL"]
        else:
            redis = EmbeddedRedis(data_dir / "redis")
            started.append(redis)
            redis_url = redis.start()
        name = unique_name("test")
        database_url = asyncio.run(create_migrated_database(server_url, name))
        try:
            yield StateServers(
                server_url=server_url, database_url=database_url, redis_url=redis_url, embedded=bool(started)
            )
        finally:
            asyncio.run(drop_database(server_url, name))
    finally:
        for server in reversed(started):
            server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
async def pg_engine(state_servers: StateServers) -> AsyncIterator[AsyncEngine]:
    """An engine on the tests' database, with empty tables."""
    engine = create_engine(state_servers.database_url, pool_size=5, max_overflow=20)
    async with engine.begin() as conn:
        await conn.execute(text("TRUNCATE runs, steps, run_messages, run_tool_sets, webhook_deliveries"))
    yield engine
    await engine.dispose()


@pytest.fixture
async def redis_client(state_servers: StateServers) -> AsyncIterator[Redis]:
    """A Redis client."""
    client = create_redis(state_servers.redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def redis_prefix(redis_client: Redis) -> AsyncIterator[str]:
    """A key prefix for this test alone; its keys are deleted afterwards."""
    prefix = f"agentkit-test:{secrets.token_hex(8)}:"
    yield prefix
    keys = [key async for key in redis_client.scan_iter(match=f"{prefix}*")]
    if keys:
        await redis_client.delete(*keys)
