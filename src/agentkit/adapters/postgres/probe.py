"""Is PostgreSQL answering?"""

from typing import Final

from sqlalchemy import text
from sqlalchemy.engine import URL

from agentkit.adapters.postgres.engine import create_engine
from agentkit.application.ports.health_probe import HealthProbe

_SELECT_1: Final = text("SELECT 1")


class PostgresProbe(HealthProbe):
    """`SELECT 1` on a connection of the probe's own.

    Not on the service's pool: under load, or with the server frozen, every pooled connection may be
    busy or stuck, and a probe queued behind them would measure the pool, not the database, and miss
    /health's bound. One connection (a second for overlapping checks), each wait bounded by `timeout_s`.

    Args:
        url: The database to probe.
        timeout_s: The bound on connecting, waiting for the connection and the statement.
    """

    name = "postgres"

    def __init__(self, url: URL, *, timeout_s: float = 1.5) -> None:
        self._engine = create_engine(
            url,
            pool_size=1,
            max_overflow=1,
            connect_timeout_s=timeout_s,
            pool_timeout_s=timeout_s,
            statement_timeout_s=timeout_s,
        )

    async def check(self) -> None:
        """Raise unless the database answers."""
        async with self._engine.connect() as connection:
            await connection.execute(_SELECT_1)

    async def aclose(self) -> None:
        """Close the probe's connections."""
        await self._engine.dispose()
