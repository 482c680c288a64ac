"""PostgreSQL URLs: parsing DATABASE_URL's spellings, and the forms SQLAlchemy and raw asyncpg take.

DATABASE_URL may be written the way every tool writes it (`postgresql://user:pass@host:5432/db`,
also `postgres://`) or the way SQLAlchemy spells its asyncpg driver (`postgresql+asyncpg://`).
Either way the engine gets the asyncpg form and raw asyncpg gets the plain form.
"""

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from agentkit.application.errors import ConfigurationError

_ACCEPTED_SCHEMES = frozenset({"postgresql", "postgres", "postgresql+asyncpg"})
ASYNCPG_DRIVER = "postgresql+asyncpg"


def parse_database_url(raw: str, *, variable: str = "DATABASE_URL") -> URL:
    """Parse a PostgreSQL URL into SQLAlchemy's asyncpg form.

    Raises:
        ConfigurationError: the URL is malformed or names another database or driver.
    """
    try:
        url = make_url(raw)
    except ArgumentError:
        raise ConfigurationError(f"{variable}: not a URL; expected postgresql://user:pass@host:port/db") from None
    if url.drivername not in _ACCEPTED_SCHEMES:
        raise ConfigurationError(
            f"{variable}: scheme {url.drivername!r} is not supported; use postgresql:// or postgresql+asyncpg://"
        )
    url = url.set(drivername=ASYNCPG_DRIVER)
    if "sslmode" in url.query:
        # libpq spells it sslmode, asyncpg spells it ssl (same values: disable, require, verify-full...).
        url = url.difference_update_query(["sslmode"]).update_query_dict({"ssl": url.query["sslmode"]})
    return url


def as_url(url: str | URL, *, variable: str = "DATABASE_URL") -> URL:
    """A PostgreSQL URL in SQLAlchemy's asyncpg form, from either a string or a URL."""
    return url if isinstance(url, URL) else parse_database_url(url, variable=variable)


def asyncpg_dsn(url: URL) -> str:
    """The URL as a DSN for raw asyncpg (`postgresql://`), password included."""
    plain = url.set(drivername="postgresql")
    if "ssl" in plain.query:
        plain = plain.difference_update_query(["ssl"]).update_query_dict({"sslmode": url.query["ssl"]})
    return plain.render_as_string(hide_password=False)


def with_database(url: URL, database: str) -> URL:
    """The same server and credentials, another database."""
    return url.set(database=database)
