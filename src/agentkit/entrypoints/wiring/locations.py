"""Where the servers are, as the settings say: AgentKit's database, and the demo database sql_readonly reads."""

from sqlalchemy.engine import URL

from agentkit.adapters.demo import DemoSeedConfig
from agentkit.adapters.postgres import ASYNCPG_DRIVER, as_url, asyncpg_dsn, parse_database_url
from agentkit.application.errors import ConfigurationError
from agentkit.entrypoints.wiring.settings import StateSettings, ToolSettings


def database_url(state: StateSettings) -> URL | None:
    """The configured database as an asyncpg URL, or None when neither DATABASE_URL nor POSTGRES_HOST is set."""
    if state.database_url:
        return parse_database_url(state.database_url)
    if state.postgres_host:
        return URL.create(
            ASYNCPG_DRIVER,
            username=state.postgres_user,
            password=state.postgres_password or None,
            host=state.postgres_host,
            port=state.postgres_port,
            database=state.postgres_db,
        )
    return None


def demo_reader_dsn(state: StateSettings, admin_url: str | URL | None = None) -> str:
    """The asyncpg DSN of the read-only role on the demo database.

    `DATABASE_READONLY_URL` wins when set. Otherwise it is AgentKit's own database URL
    (`admin_url`, such as the embedded server's, else DATABASE_URL or the POSTGRES_* variables)
    with the user, password and database swapped for POSTGRES_READONLY_USER,
    POSTGRES_READONLY_PASSWORD and DEMO_DATABASE: same server, different role and database.

    Raises:
        ConfigurationError: no URL is configured to start from.
    """
    if state.database_readonly_url:
        return asyncpg_dsn(as_url(state.database_readonly_url, variable="DATABASE_READONLY_URL"))
    base = as_url(admin_url) if admin_url is not None else database_url(state)
    if base is None:
        raise ConfigurationError(
            "DATABASE_READONLY_URL: not set, and no DATABASE_URL or POSTGRES_HOST to derive it from"
        )
    reader = base.set(
        username=state.postgres_readonly_user,
        password=state.postgres_readonly_password,
        database=state.demo_database,
    )
    return asyncpg_dsn(reader)


def demo_seed_config(state: StateSettings, tools: ToolSettings) -> DemoSeedConfig:
    """What seeding the demo database needs from the settings."""
    return DemoSeedConfig(
        database=state.demo_database,
        reader_user=state.postgres_readonly_user,
        reader_password=state.postgres_readonly_password,
        statement_timeout_ms=tools.sql_statement_timeout_ms,
    )
