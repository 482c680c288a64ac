"""Creating and dropping databases on a server (the embedded default, test and benchmark scratch databases)."""

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy.engine import URL

from agentkit.adapters.postgres.url import asyncpg_dsn, with_database


def _quoted(name: str) -> str:
    # Identifiers cannot be bound parameters; quote the name the way PostgreSQL does.
    return '"' + name.replace('"', '""') + '"'


async def create_database(server_url: URL, name: str, *, if_missing: bool = False) -> URL:
    """Create database `name` on the server of `server_url`; return the new database's URL.

    Args:
        server_url: Any database on the server, with a role allowed to create databases.
        name: The new database.
        if_missing: Do nothing when it exists already.
    """
    conn = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if not (exists and if_missing):
            await conn.execute(f"CREATE DATABASE {_quoted(name)}")
    finally:
        await conn.close()
    return with_database(server_url, name)


async def drop_database(server_url: URL, name: str) -> None:
    """Drop database `name` if it exists, closing the connections still open to it."""
    conn = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")
    finally:
        await conn.close()
