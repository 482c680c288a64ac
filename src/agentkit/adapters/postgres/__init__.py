"""PostgreSQL adapters: runs and steps through SQLAlchemy Core on asyncpg, and the Alembic migrator."""

from agentkit.adapters.postgres.admin import create_database, drop_database
from agentkit.adapters.postgres.engine import create_engine
from agentkit.adapters.postgres.migrator import AlembicSchemaMigrator
from agentkit.adapters.postgres.run_listing import SqlaRunListing
from agentkit.adapters.postgres.runs import SqlaRunRepository
from agentkit.adapters.postgres.schema import SchemaRevisions, find_migrations
from agentkit.adapters.postgres.trace import SqlaTraceSink
from agentkit.adapters.postgres.url import ASYNCPG_DRIVER, as_url, asyncpg_dsn, parse_database_url, with_database

__all__ = [
    "ASYNCPG_DRIVER",
    "AlembicSchemaMigrator",
    "SchemaRevisions",
    "SqlaRunListing",
    "SqlaRunRepository",
    "SqlaTraceSink",
    "as_url",
    "asyncpg_dsn",
    "create_database",
    "create_engine",
    "drop_database",
    "find_migrations",
    "parse_database_url",
    "with_database",
]
