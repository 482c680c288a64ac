"""A seeded demo database and its read-only role, on the tests' PostgreSQL server.

Registered from the root conftest with `pytest_plugins`.

The server is the one `state_servers` provides (DATABASE_URL, else the embedded one). Each test
module gets its own demo database `agentkit_demo_*` and reader role `agentkit_reader_*`, both
dropped afterwards; AgentKit's own (migrated) test database stands in for "AgentKit's tables".
"""

import asyncio
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy.engine import URL

from agentkit.adapters.demo import seed_demo_database
from agentkit.adapters.postgres import asyncpg_dsn, with_database
from tests.state_fixtures import StateServers, unique_name

STATEMENT_TIMEOUT_MS = 500


@dataclass(frozen=True)
class DemoDatabase:
    """The seeded demo database.

    Attributes:
        admin_url: AgentKit's own database (with the admin role), which seeded the demo one.
        database: The demo database's name.
        reader: The read-only role's name.
        password: Its password.
    """

    admin_url: URL
    database: str
    reader: str
    password: str

    def reader_dsn(self, database: str | None = None) -> str:
        """An asyncpg DSN of the reader role, on the demo database unless another is named."""
        url = self.admin_url.set(username=self.reader, password=self.password, database=database or self.database)
        return asyncpg_dsn(url)

    def admin_dsn(self, database: str | None = None) -> str:
        """An asyncpg DSN of the admin role, on AgentKit's database unless another is named."""
        return asyncpg_dsn(with_database(self.admin_url, database) if database else self.admin_url)


async def drop_demo(server_url: URL, database: str, reader: str) -> None:
    """Drop the demo database and its role."""
    conn = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await conn.execute(f'DROP ROLE IF EXISTS "{reader}"')
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def demo_db(state_servers: StateServers) -> Iterator[DemoDatabase]:
    """A freshly seeded demo database with its own reader role, for one test module."""
    demo = DemoDatabase(
        admin_url=state_servers.database_url,
        database=unique_name("demo"),
        reader=f"agentkit_reader_{secrets.token_hex(4)}",
        password=secrets.token_urlsafe(16),
    )
    try:
        asyncio.run(
            seed_demo_database(
                demo.admin_url,
                database=demo.database,
                reader_user=demo.reader,
                reader_password=demo.password,
                statement_timeout_ms=STATEMENT_TIMEOUT_MS,
            )
        )
        yield demo
    finally:
        asyncio.run(drop_demo(state_servers.server_url, demo.database, demo.reader))
