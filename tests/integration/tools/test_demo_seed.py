"""The demo database and its reader role: what the role can and cannot do, with no help from the tool.

These tests connect as the reader directly, and even turn the read-only default off, to show the
role's privileges alone keep it to reading the demo tables.
"""

import secrets
from collections.abc import AsyncIterator

import asyncpg  # type: ignore[import-untyped]
import pytest

from agentkit.adapters.demo import DEMO_TABLES, seed_demo_database
from agentkit.application.errors import ConfigurationError
from tests.demo_fixtures import STATEMENT_TIMEOUT_MS, DemoDatabase

pytestmark = pytest.mark.integration


@pytest.fixture
async def reader(demo_db: DemoDatabase) -> AsyncIterator[asyncpg.Connection]:
    """A raw session of the reader role on the demo database, with the read-only default switched off."""
    conn = await asyncpg.connect(demo_db.reader_dsn())
    await conn.execute("SET default_transaction_read_only = off")
    yield conn
    await conn.close()


async def test_the_role_gets_read_only_sessions_and_a_timeout_by_default(demo_db: DemoDatabase) -> None:
    conn = await asyncpg.connect(demo_db.reader_dsn())
    try:
        assert await conn.fetchval("SHOW default_transaction_read_only") == "on"
        assert await conn.fetchval("SHOW statement_timeout") == f"{STATEMENT_TIMEOUT_MS}ms"
        with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
            await conn.execute("DELETE FROM orders")
    finally:
        await conn.close()


async def test_the_role_has_no_attributes_and_no_memberships(demo_db: DemoDatabase) -> None:
    admin = await asyncpg.connect(demo_db.admin_dsn())
    try:
        role = await admin.fetchrow(
            "SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, rolinherit,"
            " (SELECT count(*) FROM pg_auth_members WHERE member = r.oid) AS memberships"
            " FROM pg_roles r WHERE rolname = $1",
            demo_db.reader,
        )
    finally:
        await admin.close()
    assert dict(role) == {
        "rolsuper": False,
        "rolcreatedb": False,
        "rolcreaterole": False,
        "rolreplication": False,
        "rolbypassrls": False,
        "rolinherit": False,
        "memberships": 0,
    }


@pytest.mark.parametrize("table", DEMO_TABLES)
async def test_the_role_can_read_every_demo_table(reader: asyncpg.Connection, table: str) -> None:
    assert await reader.fetchval(f"SELECT count(*) FROM {table}") > 0  # noqa: S608 - fixed names


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders",
        "UPDATE orders SET status = 'paid'",
        "INSERT INTO products VALUES (99, 'x', 'y', 1)",
        "TRUNCATE order_items",
        "SELECT nextval('orders_id_seq')",
        "CREATE TABLE stolen (a int)",
        "CREATE TEMP TABLE scratch (a int)",
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "DROP TABLE orders",
        "ALTER TABLE orders ADD COLUMN x int",
        "ALTER ROLE CURRENT_USER CREATEDB",
        "CREATE SCHEMA private",
        "SELECT pg_read_file('/etc/passwd')",
    ],
)
async def test_without_the_read_only_default_the_privileges_still_refuse(reader: asyncpg.Connection, sql: str) -> None:
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await reader.execute(sql)


async def test_tables_added_later_are_not_readable(demo_db: DemoDatabase, reader: asyncpg.Connection) -> None:
    admin = await asyncpg.connect(demo_db.admin_dsn(demo_db.database))
    try:
        await admin.execute("CREATE TABLE staff_salaries (name text, salary int)")
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="staff_salaries"):
            await reader.fetch("SELECT * FROM staff_salaries")
    finally:
        await admin.execute("DROP TABLE staff_salaries")
        await admin.close()


async def test_agentkits_own_tables_are_out_of_reach(demo_db: DemoDatabase) -> None:
    # AgentKit's database lets PUBLIC connect (PostgreSQL's default), so try from inside it.
    conn = await asyncpg.connect(demo_db.reader_dsn(demo_db.admin_url.database))
    try:
        await conn.execute("SET default_transaction_read_only = off")
        for sql in ("SELECT * FROM runs", "SELECT * FROM steps", "DELETE FROM runs", "SELECT * FROM alembic_version"):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.fetch(sql)
    finally:
        await conn.close()


async def test_other_roles_cannot_connect_to_the_demo_database(demo_db: DemoDatabase) -> None:
    stranger, password = f"agentkit_stranger_{secrets.token_hex(4)}", secrets.token_urlsafe(12)
    admin = await asyncpg.connect(demo_db.admin_dsn())
    try:
        await admin.execute(f"CREATE ROLE {stranger} LOGIN PASSWORD '{password}'")
        url = demo_db.admin_url.set(username=stranger, password=password, database=demo_db.database)
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied for database"):
            await asyncpg.connect(url.set(drivername="postgresql").render_as_string(hide_password=False))
    finally:
        await admin.execute(f"DROP ROLE IF EXISTS {stranger}")
        await admin.close()


async def test_seeding_again_resets_the_data_and_keeps_the_rules(demo_db: DemoDatabase) -> None:
    admin = await asyncpg.connect(demo_db.admin_dsn(demo_db.database))
    try:
        await admin.execute("DELETE FROM order_items WHERE order_id > 10")
    finally:
        await admin.close()
    seeded = await seed_demo_database(
        demo_db.admin_url,
        database=demo_db.database,
        reader_user=demo_db.reader,
        reader_password=demo_db.password,
        statement_timeout_ms=STATEMENT_TIMEOUT_MS,
    )
    assert seeded.row_counts == {"customers": 8, "products": 10, "orders": 20, "order_items": 30}
    conn = await asyncpg.connect(demo_db.reader_dsn())
    try:
        assert await conn.fetchval("SELECT count(*) FROM order_items") == 30
        with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
            await conn.execute("DELETE FROM orders")
    finally:
        await conn.close()


async def test_refuses_to_seed_into_agentkits_own_database(demo_db: DemoDatabase) -> None:
    own = demo_db.admin_url.database
    assert own is not None
    with pytest.raises(ConfigurationError, match=r"DEMO_DATABASE: .* is AgentKit's own database"):
        await seed_demo_database(demo_db.admin_url, database=own, reader_user=demo_db.reader, reader_password="x")


async def test_refuses_a_privileged_reader_role(demo_db: DemoDatabase) -> None:
    admin_user = demo_db.admin_url.username
    assert admin_user is not None
    with pytest.raises(ConfigurationError, match=r"POSTGRES_READONLY_USER: .* needs a dedicated role"):
        await seed_demo_database(
            demo_db.admin_url, database=demo_db.database, reader_user=admin_user, reader_password="x"
        )


async def test_refuses_a_reader_role_that_is_a_member_of_another(demo_db: DemoDatabase) -> None:
    member = f"agentkit_member_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(demo_db.admin_dsn())
    try:
        await admin.execute(f"CREATE ROLE {member} LOGIN IN ROLE pg_read_server_files")
        with pytest.raises(ConfigurationError, match="role memberships"):
            await seed_demo_database(
                demo_db.admin_url, database=demo_db.database, reader_user=member, reader_password="x"
            )
    finally:
        await admin.execute(f"DROP ROLE IF EXISTS {member}")
        await admin.close()
