"""Runs the Alembic migrations in `migrations/` against an async engine, from inside a running event loop."""

from functools import cached_property
from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import store_outage
from agentkit.adapters.postgres.engine import create_engine
from agentkit.adapters.postgres.schema import SchemaRevisions, find_migrations
from agentkit.application.ports.schema_migrator import SchemaMigrator, SchemaStatus

# Any constant works; it only has to be the same in every AgentKit process.
_MIGRATION_LOCK_KEY: Final = 0x4147_4B54  # "AGKT"
_postgres = store_outage("PostgreSQL")


class AlembicSchemaMigrator(SchemaMigrator):
    """Upgrades the schema to Alembic's head over a connection of the given engine.

    The whole upgrade is one transaction (PostgreSQL has transactional DDL) behind an advisory
    lock, so two processes starting at once apply each migration exactly once.

    Args:
        engine: The engine of the database to migrate.
        script_location: The Alembic script directory; found with `find_migrations` by default.
    """

    def __init__(self, engine: AsyncEngine, *, script_location: Path | None = None) -> None:
        self._engine = engine
        self._script_location = script_location

    @cached_property
    def _revisions(self) -> SchemaRevisions:
        return SchemaRevisions(self._script_location)

    def _config(self, connection: Connection) -> Config:
        config = Config()
        config.set_main_option("script_location", str(self._script_location or find_migrations()))
        # migrations/env.py uses this connection instead of opening its own (Alembic's connection-sharing recipe).
        config.attributes["connection"] = connection
        return config

    @_postgres
    async def upgrade(self) -> None:
        """Apply the migrations not yet applied."""
        # On a connection of its own, without the engine's statement timeout: a migration that
        # rewrites or indexes a large table may take minutes, where a request's statement takes milliseconds.
        engine = create_engine(self._engine.url, pool_size=1, max_overflow=0, statement_timeout_s=None)
        try:
            async with engine.begin() as conn:
                await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
                await conn.run_sync(lambda sync_conn: command.upgrade(self._config(sync_conn), "head"))
        finally:
            await engine.dispose()

    @_postgres
    async def current(self) -> str | None:
        """The revision recorded in `alembic_version`, or None."""
        async with self._engine.connect() as conn:
            return await conn.run_sync(lambda sync_conn: MigrationContext.configure(sync_conn).get_current_revision())

    async def status(self) -> SchemaStatus:
        """The recorded revision against the newest of the migrations (read once per migrator)."""
        return self._revisions.status(await self.current())
