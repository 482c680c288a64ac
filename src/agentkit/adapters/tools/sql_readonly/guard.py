"""The first of sql_readonly's layers: a query must parse as exactly one read-only SELECT.

The check uses pglast, which is PostgreSQL's own parser, so comments, quoting and dollar
quotes are understood exactly as the server will understand them: `SELECT 1; DROP TABLE t`
is two statements however it is spelled, and `SELECT 1 -- ; DROP TABLE t` is one harmless one.

This layer gives the model clear reasons. It is not the guarantee: the database enforces the
same rules again (a READ ONLY transaction, a role that may only SELECT the demo tables, a
statement timeout), and the functions refused below would be stopped or bounded there too.
"""

import re
from collections.abc import Iterator
from typing import Any, Final

import pglast
from pglast import ast
from pglast.parser import ParseError

from agentkit.adapters.tools.errors import UnsafeQuery

MAX_QUERY_CHARS: Final = 20_000

_WRITES: Final[dict[type[Any], str]] = {
    ast.InsertStmt: "an INSERT",
    ast.UpdateStmt: "an UPDATE",
    ast.DeleteStmt: "a DELETE",
    ast.MergeStmt: "a MERGE",
}
_STATEMENT_NAMES: Final[dict[str, str]] = {
    "CopyStmt": "COPY",
    "ExplainStmt": "EXPLAIN (EXPLAIN ANALYZE runs its statement)",
    "VariableSetStmt": "SET",
    "VariableShowStmt": "SHOW",
    "TransactionStmt": "a transaction command",
    "CreateTableAsStmt": "CREATE TABLE AS",
}

# Functions with effects beyond returning rows: they wait, lock, signal, write, or reach outside
# the database. Matched on the unqualified, lower-cased name, so `pg_catalog.PG_SLEEP` counts too.
_REFUSED_FUNCTIONS: Final[dict[str, str]] = {
    "pg_sleep": "it only waits",
    "pg_sleep_for": "it only waits",
    "pg_sleep_until": "it only waits",
    "set_config": "it changes server settings",
    "pg_notify": "it sends notifications",
    "nextval": "it advances a sequence",
    "setval": "it sets a sequence",
    "pg_read_file": "it reads server files",
    "pg_read_binary_file": "it reads server files",
    "pg_stat_file": "it reads server files",
    "pg_cancel_backend": "it signals other sessions",
    "pg_terminate_backend": "it signals other sessions",
    "pg_reload_conf": "it reloads the server configuration",
    "pg_rotate_logfile": "it rotates the server log",
    "query_to_xml": "it runs SQL from a string",
    "query_to_xmlschema": "it runs SQL from a string",
    "query_to_xml_and_xmlschema": "it runs SQL from a string",
    "cursor_to_xml": "it reads from a cursor",
}
_REFUSED_PREFIXES: Final[dict[str, str]] = {
    "pg_advisory": "it takes locks that outlive the query",
    "pg_try_advisory": "it takes locks that outlive the query",
    "lo_": "it touches large objects and server files",
    "dblink": "it connects to other databases",
    "pg_ls_": "it lists server folders",
}


def check_select(sql: str) -> str:
    """Accept exactly one read-only SELECT (WITH, UNION and VALUES included), or say why not.

    Args:
        sql: The query the model wrote.

    Returns:
        The query, stripped of surrounding whitespace.

    Raises:
        UnsafeQuery: the query is empty, too long, invalid, not a single SELECT, or contains a
            data-modifying WITH part, SELECT INTO, a locking clause or a refused function.
    """
    text = sql.strip()
    if not text:
        raise UnsafeQuery("the query is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise UnsafeQuery(f"the query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}")
    try:
        statements = pglast.parse_sql(text)
    except ParseError as exc:
        raise UnsafeQuery(f"not valid SQL: {exc}") from None
    if len(statements) != 1:
        raise UnsafeQuery(f"give exactly one statement; found {len(statements)}")
    statement = statements[0].stmt
    if not isinstance(statement, ast.SelectStmt):
        raise UnsafeQuery(f"only SELECT queries are allowed; this is {_describe(statement)}")
    for node in _walk(statement):
        _check_node(node)
    return text


def _check_node(node: Any) -> None:
    if type(node) in _WRITES:
        raise UnsafeQuery(f"only reading is allowed; the query contains {_WRITES[type(node)]} (in a WITH part)")
    if isinstance(node, ast.SelectStmt):
        if node.intoClause is not None:
            raise UnsafeQuery("SELECT INTO creates a table; only reading is allowed")
        if node.lockingClause:
            raise UnsafeQuery("FOR UPDATE/SHARE locks rows; only plain reading is allowed")
    elif isinstance(node, ast.FuncCall):
        name = (node.funcname or ())[-1].sval.lower()
        reason = _REFUSED_FUNCTIONS.get(name) or next(
            (why for prefix, why in _REFUSED_PREFIXES.items() if name.startswith(prefix)), None
        )
        if reason is not None:
            raise UnsafeQuery(f"the function {name}() is not allowed: {reason}")


def _walk(root: Any) -> Iterator[Any]:
    """Every AST node below `root`, without recursion (deeply nested queries must not overflow)."""
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif isinstance(item, ast.Node):
            yield item
            stack.extend(getattr(item, attribute) for attribute in item)


def _describe(statement: Any) -> str:
    name = type(statement).__name__
    if type(statement) in _WRITES:
        return _WRITES[type(statement)]
    if name in _STATEMENT_NAMES:
        return _STATEMENT_NAMES[name]
    # CreateStmt, AlterTableStmt, DoStmt, ...: named from the node type as "CREATE", "ALTER TABLE", "DO".
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name.removesuffix("Stmt")).upper()
    return f"{words} (a statement that is not a query)"
