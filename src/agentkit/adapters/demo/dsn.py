"""The URL sql_readonly connects with: the read-only role, on the demo database."""

from sqlalchemy.engine import URL

from agentkit.adapters.postgres import asyncpg_dsn, database_url, parse_database_url
from agentkit.application.errors import ConfigurationError
from agentkit.application.settings import Settings


def as_url(url: str | URL, *, variable: str = "DATABASE_URL") -> URL:
    """A PostgreSQL URL in SQLAlchemy's form, from either a string or a URL."""
    return url if isinstance(url, URL) else parse_database_url(url, variable=variable)


def demo_reader_dsn(settings: Settings, admin_url: str | URL | None = None) -> str:
    """The asyncpg DSN of the read-only role on the demo database.

    `DATABASE_READONLY_URL` wins when set. Otherwise it is AgentKit's own database URL
    (`admin_url`, such as the embedded server's, else DATABASE_URL or the POSTGRES_* variables)
    with the user, password and database swapped for POSTGRES_READONLY_USER,
    POSTGRES_READONLY_PASSWORD and DEMO_DATABASE: same server, different role and database.

    Raises:
        ConfigurationError: no URL is configured to start from.
    """
    if settings.database_readonly_url:
        return asyncpg_dsn(as_url(settings.database_readonly_url, variable="DATABASE_READONLY_URL"))
    base = as_url(admin_url) if admin_url is not None else database_url(settings)
    if base is None:
        raise ConfigurationError(
            "DATABASE_READONLY_URL: not set, and no DATABASE_URL or POSTGRES_HOST to derive it from"
        )
    reader = base.set(
        username=settings.postgres_readonly_user,
        password=settings.postgres_readonly_password,
        database=settings.demo_database,
    )
    return asyncpg_dsn(reader)
