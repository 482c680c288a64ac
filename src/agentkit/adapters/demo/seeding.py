"""Create the demo database, its tables and rows, and the role sql_readonly connects as.

The role is what makes sql_readonly safe at the database level, so it is set up here with care:
- it can log in and CONNECT to the demo database, USAGE its `public` schema and SELECT the demo
  tables, and has no other grant anywhere; the demo database's PUBLIC grants are revoked;
- AgentKit's own tables live in another database, where the role has no grant (PUBLIC has no
  SELECT on new tables), and sql_readonly's connection is pinned to the demo database;
- `default_transaction_read_only=on` and a `statement_timeout` are set on the role itself;
- it has no attributes (superuser, createdb, createrole, replication, bypassrls) and no role
  memberships: a membership would let `SET ROLE` borrow another role's rights, so an existing
  role with one is refused rather than silently changed.
"""

import contextlib
import re
from importlib import resources
from typing import Any, Final

import asyncpg  # type: ignore[import-untyped]
import msgspec
from sqlalchemy.engine import URL

from agentkit.adapters.postgres import as_url, asyncpg_dsn, with_database
from agentkit.application.errors import ConfigurationError

DEMO_TABLES: Final = ("customers", "products", "orders", "order_items")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class DemoSeed(msgspec.Struct, frozen=True, kw_only=True):
    """What `seed_demo_database` set up.

    Attributes:
        database: The demo database's name.
        reader: The read-only role's name.
        row_counts: Rows per demo table.
    """

    database: str
    reader: str
    row_counts: dict[str, int]


def seed_sql() -> str:
    """The seed script, a resource of this package."""
    return resources.files(__package__).joinpath("seed.sql").read_text(encoding="utf-8")


async def seed_demo_database(
    admin_dsn: str | URL,
    *,
    database: str = "agentkit_demo",
    reader_user: str = "agentkit_demo_reader",
    reader_password: str,
    statement_timeout_ms: int = 5000,
) -> DemoSeed:
    """Create (or reset) the demo database and its read-only role. Safe to run again.

    Args:
        admin_dsn: A URL (string or SQLAlchemy URL) of a role that may create databases and
            roles, on AgentKit's own database (`postgresql://` or `postgresql+asyncpg://`).
        database: The demo database (DEMO_DATABASE); it must differ from the admin URL's.
        reader_user: The read-only role (POSTGRES_READONLY_USER); created when missing.
        reader_password: Its password (POSTGRES_READONLY_PASSWORD); set on every run.
        statement_timeout_ms: The role's own statement timeout, a backstop for the tool's.

    Raises:
        ConfigurationError: a name is not a plain lower-case identifier, the demo database is
            AgentKit's own, or the reader role exists with privileges it must not have.
    """
    _check_identifier("DEMO_DATABASE", database)
    _check_identifier("POSTGRES_READONLY_USER", reader_user)
    admin_url = as_url(admin_dsn)
    admin = await asyncpg.connect(asyncpg_dsn(admin_url))
    try:
        if database == await admin.fetchval("SELECT current_database()"):
            raise ConfigurationError(f"DEMO_DATABASE: {database!r} is AgentKit's own database; use another")
        await _ensure_reader(admin, reader_user, reader_password, statement_timeout_ms)
        if not await admin.fetchval("SELECT true FROM pg_database WHERE datname = $1", database):
            with contextlib.suppress(asyncpg.DuplicateDatabaseError):  # another seeder was quicker
                await _execute(admin, "CREATE DATABASE %I", database)
        await _execute(admin, "REVOKE ALL ON DATABASE %I FROM PUBLIC", database)
        await _execute(admin, "GRANT CONNECT ON DATABASE %I TO %I", database, reader_user)
    finally:
        await admin.close()
    demo = await asyncpg.connect(asyncpg_dsn(with_database(admin_url, database)))
    try:
        async with demo.transaction():
            await demo.execute(seed_sql())
            await demo.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")
            await _execute(demo, "GRANT USAGE ON SCHEMA public TO %I", reader_user)
            await _execute(demo, "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM %I", reader_user)
            await _execute(demo, "REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM %I", reader_user)
            await _execute(demo, f"GRANT SELECT ON {', '.join(DEMO_TABLES)} TO %I", reader_user)
        counts = {table: int(await demo.fetchval(f"SELECT count(*) FROM {table}")) for table in DEMO_TABLES}  # noqa: S608 - fixed names
    finally:
        await demo.close()
    return DemoSeed(database=database, reader=reader_user, row_counts=counts)


async def _ensure_reader(admin: Any, user: str, password: str, statement_timeout_ms: int) -> None:
    role = await admin.fetchrow(
        "SELECT rolsuper OR rolcreatedb OR rolcreaterole OR rolreplication OR rolbypassrls AS privileged,"
        " rolname = current_user AS is_admin,"
        " EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid) AS has_memberships"
        " FROM pg_roles r WHERE rolname = $1",
        user,
    )
    if role is None:
        with contextlib.suppress(asyncpg.DuplicateObjectError):  # another seeder was quicker
            await _execute(admin, "CREATE ROLE %I LOGIN", user)
    elif role["privileged"] or role["is_admin"] or role["has_memberships"]:
        raise ConfigurationError(
            f"POSTGRES_READONLY_USER: the role {user!r} has privileges or role memberships; "
            "sql_readonly needs a dedicated role with none"
        )
    await _execute(admin, "ALTER ROLE %I WITH LOGIN NOINHERIT CONNECTION LIMIT 20 PASSWORD %L", user, password)
    await _execute(admin, "ALTER ROLE %I SET default_transaction_read_only = on", user)
    await _execute(admin, "ALTER ROLE %I SET statement_timeout = %L", user, str(int(statement_timeout_ms)))


async def _execute(conn: Any, template: str, *values: str) -> None:
    """Run DDL built by the server's own `format()`: %I quotes identifiers, %L literals."""
    statement = await conn.fetchval(
        f"SELECT format($1, {', '.join(f'${i}::text' for i in range(2, len(values) + 2))})",
        template,
        *values,
    )
    await conn.execute(statement)


def _check_identifier(variable: str, name: str) -> None:
    if not _IDENTIFIER.fullmatch(name):
        raise ConfigurationError(f"{variable}: {name!r} must be a lower-case identifier (letters, digits, '_')")
