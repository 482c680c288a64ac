"""sql_readonly against a real PostgreSQL, as the real read-only role.

The runner is called directly here, so the parser check is bypassed on purpose: each case shows
which database layer stops a query that got past (or was never refused by) the parser.

| what                                         | stopped by                                       |
| -------------------------------------------- | ------------------------------------------------ |
| DML, DDL, SELECT INTO, FOR UPDATE, data-     | the READ ONLY transaction (and, below it, the    |
| modifying WITH, TRUNCATE, GRANT, ALTER ROLE  | role's missing privileges: see test_role_*)      |
| two statements in one string                 | the protocol: a prepared statement holds one     |
| nextval/setval, pg_read_file, lo_import,     | the role: no privilege on the sequence/function  |
| pg_ls_dir, pg_stat_file, pg_reload_conf,     |                                                  |
| COPY to/from a file, pg_authid, SET ROLE,    |                                                  |
| set_config('role'/'session_authorization')   |                                                  |
| set_config('transaction_read_only', 'off')   | the transaction: its mode is fixed once it ran   |
| pg_sleep, runaway joins                      | statement_timeout                                |
| dblink                                       | not installed; CREATE EXTENSION is DDL           |
| query_to_xml('DELETE ...')                   | PostgreSQL: SQL in a non-volatile function       |
| set_config(any other setting)                | the rollback: nothing outlives the query         |
| pg_notify                                    | the rollback: notifications are sent on commit   |
| pg_advisory_lock                             | the pool's reset on release (unlock all)         |
| pg_terminate_backend of others               | the role: only its own sessions can be signalled |
"""

import asyncio

import asyncpg  # type: ignore[import-untyped]
import pytest

from agentkit.adapters.tools.errors import QueryFailed
from agentkit.adapters.tools.sql_readonly import AsyncpgReadOnlyQueryRunner, format_table
from tests.demo_fixtures import STATEMENT_TIMEOUT_MS, DemoDatabase

pytestmark = pytest.mark.integration

READ_ONLY = "read-only transaction"
DENIED = "permission denied|must be superuser"


async def test_reads_the_demo_tables(runner: AsyncpgReadOnlyQueryRunner) -> None:
    result = await runner.run("SELECT count(*) AS n FROM customers")
    assert format_table(result) == "n\n-\n8\n(1 row)"


async def test_marks_results_cut_at_the_row_limit(runner: AsyncpgReadOnlyQueryRunner) -> None:
    result = await runner.run("SELECT id FROM orders ORDER BY id")
    assert [row[0] for row in result.rows] == [1, 2, 3, 4, 5]
    assert result.truncated
    assert not (await runner.run("SELECT id FROM orders ORDER BY id LIMIT 5")).truncated


async def test_fetches_no_more_than_the_limit_from_a_huge_result(demo_db: DemoDatabase) -> None:
    # A cursor fetches row_limit + 1 rows; the billions behind them are never produced (producing them
    # would take hours: the generous time limit only keeps a loaded machine from failing the test).
    runner = AsyncpgReadOnlyQueryRunner(demo_db.reader_dsn(), row_limit=5, statement_timeout_ms=20_000)
    try:
        result = await runner.run("SELECT generate_series(1, 10000000000) AS g")
    finally:
        await runner.aclose()
    assert len(result.rows) == 5
    assert result.truncated


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("DELETE FROM orders", READ_ONLY),
        ("INSERT INTO customers VALUES (99, 'x', 'x@example.com', 'XX', '2025-01-01')", READ_ONLY),
        ("UPDATE orders SET status = 'paid'", READ_ONLY),
        ("WITH d AS (DELETE FROM order_items RETURNING 1) SELECT count(*) FROM d", READ_ONLY),
        ("SELECT * INTO stolen FROM customers", READ_ONLY),
        ("SELECT * FROM orders FOR UPDATE", READ_ONLY),
        ("CREATE TABLE x (a int)", READ_ONLY),
        ("CREATE TEMP TABLE x (a int)", READ_ONLY),
        ("TRUNCATE orders", READ_ONLY),
        ("DROP TABLE orders", READ_ONLY),
        ("GRANT SELECT ON orders TO PUBLIC", READ_ONLY),
        ("CREATE EXTENSION dblink", READ_ONLY),
        ("SELECT 1; DELETE FROM orders", "cannot insert multiple commands into a prepared statement"),
        ("SELECT nextval('orders_id_seq')", DENIED),
        ("SELECT setval('orders_id_seq', 1)", DENIED),
        ("SELECT pg_read_file('/etc/passwd')", DENIED),
        ("SELECT pg_read_binary_file('/etc/passwd')", DENIED),
        ("SELECT lo_import('/etc/passwd')", DENIED),
        ("SELECT * FROM pg_ls_dir('.')", DENIED),
        ("SELECT * FROM pg_stat_file('/etc/passwd')", DENIED),
        ("SELECT pg_reload_conf()", DENIED),
        ("COPY customers TO '/tmp/agentkit-stolen.csv'", DENIED),
        ("COPY customers FROM '/etc/passwd'", DENIED),
        ("SELECT * FROM pg_authid", DENIED),
        ("SELECT current_setting('data_directory')", DENIED),
        ("SET ROLE postgres", DENIED),
        ("SELECT set_config('role', 'postgres', true)", DENIED),
        ("SELECT set_config('session_authorization', 'postgres', true)", DENIED),
        ("LOCK TABLE orders", DENIED),
        ("SELECT set_config('transaction_read_only', 'off', true)", "read-write mode"),
        ("SELECT pg_sleep(5)", f"longer than {STATEMENT_TIMEOUT_MS} ms"),
        ("SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b", "longer than"),
        ("SELECT dblink('dbname=postgres', 'SELECT 1')", "does not exist"),
        ("SELECT query_to_xml('DELETE FROM orders', true, true, '')", "DELETE is not allowed"),
    ],
)
async def test_the_database_stops_what_the_parser_would_refuse(
    runner: AsyncpgReadOnlyQueryRunner, sql: str, error: str
) -> None:
    with pytest.raises(QueryFailed, match=error):
        await runner.run(sql)


async def test_the_data_is_untouched_afterwards(runner: AsyncpgReadOnlyQueryRunner) -> None:
    for sql in ("DELETE FROM orders", "WITH d AS (DELETE FROM orders RETURNING 1) SELECT 1"):
        with pytest.raises(QueryFailed):
            await runner.run(sql)
    assert (await runner.run("SELECT count(*) FROM orders")).rows == ((20,),)


async def test_settings_changed_by_a_query_do_not_outlive_it(demo_db: DemoDatabase) -> None:
    # One connection, so the second query runs where the first changed the setting.
    runner = AsyncpgReadOnlyQueryRunner(demo_db.reader_dsn(), row_limit=5, statement_timeout_ms=300, max_connections=1)
    try:
        await runner.run("SELECT set_config('statement_timeout', '0', false)")
        await runner.run("SELECT set_config('default_transaction_read_only', 'off', false)")
        assert (await runner.run("SHOW statement_timeout")).rows == (("300ms",),)
        assert (await runner.run("SELECT current_setting('transaction_read_only')")).rows == (("on",),)
        with pytest.raises(QueryFailed, match="longer than 300 ms"):
            await runner.run("SELECT pg_sleep(2)")
    finally:
        await runner.aclose()


async def test_notifications_are_never_sent(runner: AsyncpgReadOnlyQueryRunner, demo_db: DemoDatabase) -> None:
    received: list[str] = []
    listener = await asyncpg.connect(demo_db.admin_dsn(demo_db.database))
    try:
        await listener.add_listener("agentkit_test", lambda *args: received.append(args[-1]))
        await runner.run("SELECT pg_notify('agentkit_test', 'escaped')")
        await asyncio.sleep(0.3)
    finally:
        await listener.close()
    assert received == []


async def test_advisory_locks_are_released_with_the_connection(demo_db: DemoDatabase) -> None:
    runner = AsyncpgReadOnlyQueryRunner(demo_db.reader_dsn(), row_limit=5, statement_timeout_ms=500)
    admin = await asyncpg.connect(demo_db.admin_dsn(demo_db.database))
    try:
        await runner.run("SELECT pg_advisory_lock(424242)")
        held = await admin.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242")
        assert held == 0
    finally:
        await admin.close()
        await runner.aclose()


async def test_other_sessions_cannot_be_terminated(runner: AsyncpgReadOnlyQueryRunner, demo_db: DemoDatabase) -> None:
    admin = await asyncpg.connect(demo_db.admin_dsn())
    try:
        pid = await admin.fetchval("SELECT pg_backend_pid()")
        with pytest.raises(QueryFailed, match=r"must be a superuser|permission denied"):
            await runner.run(f"SELECT pg_terminate_backend({int(pid)})")
        assert await admin.fetchval("SELECT 1") == 1
    finally:
        await admin.close()


async def test_a_missing_demo_database_is_a_clear_error(demo_db: DemoDatabase) -> None:
    runner = AsyncpgReadOnlyQueryRunner(
        demo_db.reader_dsn("agentkit_no_such_database"), row_limit=5, statement_timeout_ms=500
    )
    try:
        with pytest.raises(QueryFailed, match="demo database is not available"):
            await runner.run("SELECT 1")
    finally:
        await runner.aclose()
