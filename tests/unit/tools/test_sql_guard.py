"""sql_readonly's parser layer: exactly one read-only SELECT, judged by PostgreSQL's own parser."""

import pytest

from agentkit.adapters.tools.errors import UnsafeQuery
from agentkit.adapters.tools.sql_readonly.guard import MAX_QUERY_CHARS, check_select


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "select * from customers",
        "SELECT name FROM customers WHERE id = 1;",
        "  SELECT 1  ;  ",
        "WITH t AS (SELECT id FROM orders) SELECT count(*) FROM t",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
        "SELECT 1 UNION SELECT 2 EXCEPT SELECT 3",
        "VALUES (1, 'a'), (2, 'b')",
        "TABLE customers",
        "SELECT c.name, sum(i.quantity * i.unit_price) FROM customers c JOIN orders o ON o.customer_id = c.id "
        "JOIN order_items i ON i.order_id = o.id GROUP BY c.name ORDER BY 2 DESC LIMIT 1",
        "SELECT '; DROP TABLE customers; --' AS s",
        "SELECT $$; DROP TABLE customers$$",
        "SELECT $tag$ ; DELETE FROM orders $tag$",
        "SELECT 1 -- ; DROP TABLE customers",
        "SELECT 1 /* ; DROP TABLE customers */",
        'SELECT \'delete\' AS insert, "update".x FROM (SELECT 1 AS x) AS "update"',
        "SELECT * FROM customers WHERE name = 'Robert''); DROP TABLE students;--'",
        "SELECT lower(name), now(), currval_like FROM (SELECT 'a' AS name, 1 AS currval_like) s",
        "SELECT * FROM generate_series(1, 3)",
        "SELECT (SELECT max(id) FROM orders), EXISTS (SELECT 1 FROM products)",
    ],
)
def test_accepts_read_only_queries(sql: str) -> None:
    assert check_select(sql) == sql.strip()


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        # More than one statement, however it is disguised.
        ("SELECT 1; SELECT 2", "exactly one statement; found 2"),
        ("SELECT 1; DROP TABLE customers", "found 2"),
        ("SELECT 1;DROP TABLE customers--", "found 2"),
        ("SELECT 1 /* comment */; DELETE FROM orders", "found 2"),
        ("SELECT 1 -- line comment\n; DELETE FROM orders", "found 2"),
        ("SELECT '1'';'; UPDATE orders SET status = 'paid'", "found 2"),
        ("SELECT $$a$$; TRUNCATE orders", "found 2"),
        ("/* hide */ DROP TABLE customers /* ; SELECT 1 */", "DROP"),
        ("SELECT 1; COMMIT; DROP TABLE customers", "found 3"),
        # DML and DDL.
        ("INSERT INTO orders VALUES (99, 1, now(), 'paid')", "INSERT"),
        ("UPDATE orders SET status = 'paid'", "UPDATE"),
        ("DELETE FROM orders", "DELETE"),
        ("MERGE INTO orders o USING orders s ON o.id = s.id WHEN MATCHED THEN DELETE", "MERGE"),
        ("DROP TABLE customers", "DROP"),
        ("TRUNCATE orders", "TRUNCATE"),
        ("CREATE TABLE x (a int)", "CREATE"),
        ("CREATE TEMP TABLE x AS SELECT 1", "CREATE TABLE AS"),
        ("ALTER TABLE customers ADD COLUMN x int", "ALTER TABLE"),
        ("ALTER ROLE current_user SUPERUSER", "ALTER ROLE"),
        ("GRANT ALL ON customers TO PUBLIC", "GRANT"),
        ("CREATE EXTENSION dblink", "CREATE EXTENSION"),
        ("CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql", "CREATE FUNCTION"),
        ("DO $$BEGIN DELETE FROM orders; END$$", "DO"),
        ("CALL p()", "CALL"),
        ("VACUUM orders", "VACUUM"),
        # Data-modifying WITH parts.
        ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", "a DELETE"),
        ("WITH u AS (UPDATE orders SET status = 'x' RETURNING id) SELECT count(*) FROM u", "an UPDATE"),
        ("WITH i AS (INSERT INTO products VALUES (99, 'x', 'y', 1) RETURNING 1) SELECT 1", "an INSERT"),
        ("WITH a AS (SELECT 1), b AS (DELETE FROM orders RETURNING 1) SELECT * FROM a", "a DELETE"),
        ("SELECT * FROM (WITH d AS (DELETE FROM orders RETURNING 1) SELECT 1) s", "a DELETE"),
        # SELECT INTO and row locks.
        ("SELECT * INTO stolen FROM customers", "SELECT INTO"),
        ("SELECT * INTO TEMP stolen FROM customers", "SELECT INTO"),
        ("SELECT * FROM orders FOR UPDATE", "FOR UPDATE/SHARE"),
        ("SELECT * FROM orders FOR SHARE SKIP LOCKED", "FOR UPDATE/SHARE"),
        ("SELECT * FROM orders FOR NO KEY UPDATE NOWAIT", "FOR UPDATE/SHARE"),
        ("SELECT 1 UNION (SELECT 2 FROM orders FOR KEY SHARE)", "FOR UPDATE/SHARE"),
        ("SELECT * FROM (SELECT * FROM orders FOR UPDATE) s", "FOR UPDATE/SHARE"),
        # COPY, EXPLAIN (ANALYZE runs its statement), session and transaction commands.
        ("COPY customers TO STDOUT", "COPY"),
        ("COPY customers TO '/tmp/x'", "COPY"),
        ("COPY (SELECT 1) TO PROGRAM 'id'", "COPY"),
        ("EXPLAIN ANALYZE DELETE FROM orders", "EXPLAIN"),
        ("EXPLAIN SELECT 1", "EXPLAIN"),
        ("SET ROLE postgres", "SET"),
        ("SET default_transaction_read_only = off", "SET"),
        ("RESET ALL", "SET"),
        ("SHOW ALL", "SHOW"),
        ("BEGIN", "transaction"),
        ("BEGIN READ WRITE", "transaction"),
        ("COMMIT", "transaction"),
        ("LISTEN x", "LISTEN"),
        ("NOTIFY x", "NOTIFY"),
        ("LOCK TABLE orders", "LOCK"),
        ("PREPARE p AS DELETE FROM orders", "PREPARE"),
        ("EXECUTE p", "EXECUTE"),
        ("DECLARE c CURSOR FOR SELECT 1", "DECLARE CURSOR"),
        ("REFRESH MATERIALIZED VIEW v", "REFRESH"),
    ],
)
def test_refuses_with_a_reason(sql: str, reason: str) -> None:
    with pytest.raises(UnsafeQuery, match=reason):
        check_select(sql)


@pytest.mark.parametrize(
    ("sql", "function"),
    [
        ("SELECT pg_sleep(100)", "pg_sleep"),
        ("SELECT pg_catalog.pg_sleep(100)", "pg_sleep"),
        ('SELECT "pg_sleep"(100)', "pg_sleep"),
        ("SELECT PG_SLEEP_FOR('1 hour')", "pg_sleep_for"),
        ("SELECT * FROM customers WHERE pg_sleep(1) IS NULL", "pg_sleep"),
        ("SELECT * FROM pg_sleep(10)", "pg_sleep"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
        ("SELECT pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"),
        ("SELECT * FROM pg_ls_dir('.')", "pg_ls_dir"),
        ("SELECT pg_stat_file('postgresql.conf')", "pg_stat_file"),
        ("SELECT set_config('default_transaction_read_only', 'off', false)", "set_config"),
        ("SELECT set_config('role', 'postgres', true)", "set_config"),
        ("SELECT lo_import('/etc/passwd')", "lo_import"),
        ("SELECT lo_export(1, '/tmp/x')", "lo_export"),
        ("SELECT * FROM dblink('dbname=agentkit', 'SELECT * FROM runs') AS t(x text)", "dblink"),
        ("SELECT dblink_exec('dbname=agentkit', 'DROP TABLE runs')", "dblink_exec"),
        ("SELECT nextval('orders_id_seq')", "nextval"),
        ("SELECT setval('orders_id_seq', 1)", "setval"),
        ("SELECT pg_advisory_lock(1)", "pg_advisory_lock"),
        ("SELECT pg_try_advisory_lock(1)", "pg_try_advisory_lock"),
        ("SELECT pg_notify('c', 'x')", "pg_notify"),
        ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "pg_terminate_backend"),
        ("SELECT pg_cancel_backend(1)", "pg_cancel_backend"),
        ("SELECT pg_reload_conf()", "pg_reload_conf"),
        ("SELECT query_to_xml('DELETE FROM orders', true, true, '')", "query_to_xml"),
        ("SELECT 1 FROM (SELECT pg_sleep(5)) s", "pg_sleep"),
        ("WITH s AS (SELECT pg_sleep(5)) SELECT * FROM s", "pg_sleep"),
    ],
)
def test_refuses_functions_with_side_effects(sql: str, function: str) -> None:
    with pytest.raises(UnsafeQuery, match=rf"function {function}\(\) is not allowed"):
        check_select(sql)


@pytest.mark.parametrize(
    "sql",
    ["", "   ", "\n\t", "-- only a comment", "/* only a comment */", "SELEC 1", "SELECT (", "SELECT 'unterminated"],
)
def test_refuses_empty_and_invalid_sql(sql: str) -> None:
    with pytest.raises(UnsafeQuery, match=r"empty|not valid SQL|found 0"):
        check_select(sql)


def test_refuses_queries_over_the_length_limit() -> None:
    with pytest.raises(UnsafeQuery, match="characters long"):
        check_select("SELECT " + "1 + " * MAX_QUERY_CHARS + "1")


def test_survives_deeply_nested_queries_within_the_limit() -> None:
    # The tree is walked without recursion, so nesting cannot overflow Python's stack.
    deep = "SELECT " + "(" * 9000 + "1" + ")" * 9000
    assert check_select(deep) == deep
    hidden = "SELECT " + "(SELECT " * 500 + "pg_sleep(1)" + ")" * 500
    with pytest.raises(UnsafeQuery, match="pg_sleep"):
        check_select(hidden)
