"""Is PostgreSQL answering, with the schema this release's code expects?"""

from typing import Final

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.exc import ProgrammingError

from agentkit.adapters.postgres.engine import create_engine
from agentkit.adapters.postgres.schema import SchemaRevisions
from agentkit.application.ports.health_probe import HealthProbe, NotReady

_REVISION: Final = text("SELECT version_num FROM alembic_version")
_UNDEFINED_TABLE: Final = "42P01"


class PostgresProbe(HealthProbe):
    """One statement on a connection of the probe's own: the schema's revision.

    Not on the service's pool: under load, or with the server frozen, every pooled connection may be
    busy or stuck, and a probe queued behind them would measure the pool, not the database, and miss
    /health's bound. One connection (a second for overlapping checks), each wait bounded by `timeout_s`.

    Reading the revision costs what `SELECT 1` would (one round trip), and also tells a database that
    answers but lacks what this code needs: never migrated, or behind the code (`schema_behind`: a
    backup restored, or an upgrade without `agentkit migrate`). A schema ahead of the code is ready:
    a newer release's first process migrated it while this one still serves, as in a rolling
    upgrade (migrations add; this process is about to be replaced). A process of this release
    would refuse to start on it (`schema_check`).

    Args:
        url: The database to probe.
        revisions: The migrations the schema is held to (this release's).
        timeout_s: The bound on connecting, waiting for the connection and the statement.
    """

    name = "postgres"

    def __init__(self, url: URL, *, revisions: SchemaRevisions, timeout_s: float = 1.5) -> None:
        self._revisions = revisions
        self._engine = create_engine(
            url,
            pool_size=1,
            max_overflow=1,
            connect_timeout_s=timeout_s,
            pool_timeout_s=timeout_s,
            statement_timeout_s=timeout_s,
        )

    async def check(self) -> None:
        """Raise unless the database answers; raise NotReady if its schema is behind the code's."""
        async with self._engine.connect() as connection:
            try:
                current = (await connection.execute(_REVISION)).scalar()
            except ProgrammingError as exc:
                if getattr(exc.orig, "sqlstate", None) != _UNDEFINED_TABLE:
                    raise
                current = None  # no alembic_version: never migrated
        if self._revisions.status(current).state == "behind":
            raise NotReady("schema_behind")

    async def aclose(self) -> None:
        """Close the probe's connections."""
        await self._engine.dispose()
