"""Alembic's environment for AgentKit: async (asyncpg), with the tables of `agentkit.adapters.postgres`.

Two ways in:
- `agentkit migrate` (AlembicSchemaMigrator) hands over an open connection in
  `config.attributes["connection"]`; it is used as is, inside the caller's transaction.
- `alembic upgrade head` from the repository root builds its own engine from the environment
  (DATABASE_URL or the POSTGRES_* variables), the same way the service does.
"""

import asyncio
import os
from logging.config import fileConfig

from alembic import context
from sqlalchemy.engine import URL, Connection

from agentkit.adapters.postgres.engine import create_engine
from agentkit.adapters.postgres.tables import metadata

config = context.config
_shared_connection: Connection | None = config.attributes.get("connection")

# Only the alembic command line configures logging; a program that calls us keeps its own.
if config.config_file_name is not None and _shared_connection is None:
    fileConfig(config.config_file_name)


def _configure_and_run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def _configured_url() -> URL | None:
    # only the alembic command line reads settings: `agentkit migrate` hands over its connection
    from agentkit.entrypoints.wiring.locations import database_url
    from agentkit.entrypoints.wiring.settings import load_settings

    return database_url(load_settings(os.environ).state)


async def _run_with_own_engine() -> None:
    url = _configured_url()
    if url is None:
        raise SystemExit("set DATABASE_URL (or POSTGRES_HOST and friends) to say which database to migrate")
    engine = create_engine(url, pool_size=1, max_overflow=0)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_configure_and_run)
            await connection.commit()
    finally:
        await engine.dispose()


def _run_offline() -> None:
    url = _configured_url()
    context.configure(
        url=url.render_as_string(hide_password=False) if url else "postgresql://",
        target_metadata=metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    _run_offline()
elif _shared_connection is not None:
    _configure_and_run(_shared_connection)
else:
    asyncio.run(_run_with_own_engine())
