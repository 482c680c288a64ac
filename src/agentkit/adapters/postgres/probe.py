"""Is PostgreSQL answering?"""

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.application.ports.health_probe import HealthProbe


class PostgresProbe(HealthProbe):
    """`SELECT 1` on a pooled connection."""

    name = "postgres"

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def check(self) -> None:
        """Raise unless the database answers."""
        async with self._engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
