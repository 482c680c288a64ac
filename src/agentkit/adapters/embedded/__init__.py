"""The embedded default: a private PostgreSQL and Redis from pip-installed wheels (the `embedded` extra).

With no DATABASE_URL / REDIS_URL and STATE_BACKEND=embedded, AgentKit runs both servers itself,
with their data under AGENTKIT_DATA_DIR (default `./.agentkit`), on Unix sockets only. Production
points DATABASE_URL and REDIS_URL at real servers instead; the adapters on top are the same.
"""

import asyncio
from pathlib import Path

from sqlalchemy.engine import URL

from agentkit.adapters.embedded.postgres_server import EmbeddedPostgres
from agentkit.adapters.embedded.redis_server import EmbeddedRedis
from agentkit.adapters.postgres.admin import create_database


class EmbeddedServers:
    """Starts the servers asked for under one data folder and stops them again, last started first.

    Args:
        data_dir: The folder for their data (`postgres/` and `redis/` inside it).
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.resolve()
        self._postgres = EmbeddedPostgres(self.data_dir / "postgres")
        self._redis = EmbeddedRedis(self.data_dir / "redis")
        self.postgres_url: URL | None = None
        self.redis_url: str | None = None

    async def start_postgres(self, database: str) -> URL:
        """Start PostgreSQL, create `database` if needed, and return that database's URL."""
        self.postgres_url = await asyncio.to_thread(self._postgres.start)
        return await create_database(self.postgres_url, database, if_missing=True)

    async def start_redis(self) -> str:
        """Start Redis and return its URL."""
        self.redis_url = await asyncio.to_thread(self._redis.start)
        return self.redis_url

    async def stop(self) -> None:
        """Stop what was started (close the clients that use them first)."""
        await asyncio.to_thread(self._redis.stop)
        await asyncio.to_thread(self._postgres.stop)


__all__ = ["EmbeddedPostgres", "EmbeddedRedis", "EmbeddedServers"]
