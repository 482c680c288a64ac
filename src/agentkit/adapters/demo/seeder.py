"""The DemoSeeder on PostgreSQL: the demo database beside AgentKit's own, on the same server."""

from sqlalchemy.engine import URL

from agentkit.adapters.demo.seeding import seed_demo_database
from agentkit.application.ports.demo_seeder import DemoSeeder
from agentkit.application.settings import Settings


class PostgresDemoSeeder(DemoSeeder):
    """Seeds DEMO_DATABASE and the POSTGRES_READONLY_USER role through AgentKit's own database URL."""

    def __init__(self, admin_url: URL, settings: Settings) -> None:
        self._admin_url = admin_url
        self._settings = settings

    async def seed(self) -> str:
        """Create or reset the demo data."""
        settings = self._settings
        result = await seed_demo_database(
            self._admin_url,
            database=settings.demo_database,
            reader_user=settings.postgres_readonly_user,
            reader_password=settings.postgres_readonly_password,
            statement_timeout_ms=settings.sql_statement_timeout_ms,
        )
        rows = ", ".join(f"{table} {count}" for table, count in result.row_counts.items())
        return f"demo database {result.database!r} seeded ({rows}); read-only role {result.reader!r}"
