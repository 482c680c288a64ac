"""Connection URLs for the demo database: the admin's, and the read-only role's."""

from sqlalchemy.engine import make_url

from agentkit.application.errors import ConfigurationError
from agentkit.application.settings import Settings


def asyncpg_dsn(url: str) -> str:
    """A URL asyncpg accepts: `postgresql+asyncpg://...` (SQLAlchemy's form) becomes `postgresql://...`."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def with_database(url: str, database: str) -> str:
    """The same server and credentials, another database."""
    return make_url(asyncpg_dsn(url)).set(database=database).render_as_string(hide_password=False)


def demo_reader_dsn(settings: Settings, admin_url: str | None = None) -> str:
    """The URL sql_readonly connects with: the read-only role on the demo database.

    `DATABASE_READONLY_URL` wins when set. Otherwise the URL is `admin_url` (AgentKit's own
    database URL: `DATABASE_URL`, or the embedded server's) with the user, password and
    database swapped for `POSTGRES_READONLY_USER`, `POSTGRES_READONLY_PASSWORD` and `DEMO_DATABASE`.

    Raises:
        ConfigurationError: neither URL is known.
    """
    if settings.database_readonly_url:
        return asyncpg_dsn(settings.database_readonly_url)
    base = admin_url or settings.database_url
    if not base:
        raise ConfigurationError("DATABASE_READONLY_URL: not set, and no DATABASE_URL to derive it from")
    url = make_url(asyncpg_dsn(base)).set(
        username=settings.postgres_readonly_user,
        password=settings.postgres_readonly_password,
        database=settings.demo_database,
    )
    return url.render_as_string(hide_password=False)
