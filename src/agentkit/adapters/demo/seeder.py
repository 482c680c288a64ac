"""The DemoSeeder on PostgreSQL: the demo database beside AgentKit's own, on the same server."""

import msgspec
from sqlalchemy.engine import URL

from agentkit.adapters.demo.seeding import seed_demo_database
from agentkit.application.ports.demo_seeder import DemoSeeder


class DemoSeedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The demo database, and the read-only role sql_readonly connects as.

    Attributes:
        database: DEMO_DATABASE.
        reader_user: POSTGRES_READONLY_USER.
        reader_password: POSTGRES_READONLY_PASSWORD.
        statement_timeout_ms: The role's own statement timeout (SQL_STATEMENT_TIMEOUT_MS).
    """

    database: str = "agentkit_demo"
    reader_user: str = "agentkit_demo_reader"
    reader_password: str = "agentkit_demo_reader"  # noqa: S105 - a local demo role's default
    statement_timeout_ms: int = 5000


class PostgresDemoSeeder(DemoSeeder):
    """Seeds the demo database and its read-only role through AgentKit's own database URL."""

    def __init__(self, admin_url: URL, config: DemoSeedConfig) -> None:
        self._admin_url = admin_url
        self._config = config

    async def seed(self) -> str:
        """Create or reset the demo data."""
        config = self._config
        result = await seed_demo_database(
            self._admin_url,
            database=config.database,
            reader_user=config.reader_user,
            reader_password=config.reader_password,
            statement_timeout_ms=config.statement_timeout_ms,
        )
        rows = ", ".join(f"{table} {count}" for table, count in result.row_counts.items())
        return f"demo database {result.database!r} seeded ({rows}); read-only role {result.reader!r}"
