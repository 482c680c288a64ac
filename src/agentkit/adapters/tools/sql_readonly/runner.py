"""Running a checked query in the demo database, as the read-only role, inside every limit.

The database layers, each of which holds even if the parser check above them were wrong:
- the role: it may CONNECT to the demo database and SELECT its tables, nothing more;
- the transaction: `BEGIN READ ONLY` (and the role's `default_transaction_read_only`), always
  rolled back, so nothing a query changes (settings included) outlives it;
- the protocol: the query is prepared, and PostgreSQL refuses to prepare two statements at once;
- the time: `SET LOCAL statement_timeout`, and a client-side deadline in case the network hangs;
- the size: rows come through a cursor, and only `row_limit + 1` are ever fetched.
"""

import asyncio
from abc import abstractmethod
from typing import Any, Protocol

import asyncpg  # type: ignore[import-untyped]

from agentkit.adapters.tools.errors import QueryFailed
from agentkit.adapters.tools.sql_readonly.table import QueryResult

# Errors that mean "the demo database is not there or not set up", not "your query is wrong".
_UNAVAILABLE = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.InvalidCatalogNameError,
    asyncpg.InvalidPasswordError,
    asyncpg.InvalidAuthorizationSpecificationError,
    asyncpg.CannotConnectNowError,
)


class ReadOnlyQueryRunner(Protocol):
    """Runs one already checked query and returns at most the row limit of rows."""

    @abstractmethod
    async def run(self, sql: str) -> QueryResult:
        """Run the query.

        Raises:
            QueryFailed: the database refused or failed the query, or cannot be reached.
        """


class AsyncpgReadOnlyQueryRunner(ReadOnlyQueryRunner):
    """Runs queries through a small asyncpg pool, created on first use, as the read-only role.

    Args:
        dsn: A `postgresql://` URL of the read-only role on the demo database.
        row_limit: The most rows a result holds; more are marked as truncated.
        statement_timeout_ms: The server-side time limit of each statement.
        max_connections: The pool's size.
    """

    def __init__(self, dsn: str, *, row_limit: int, statement_timeout_ms: int, max_connections: int = 4) -> None:
        self._dsn = dsn
        self._row_limit = row_limit
        self._timeout_ms = int(statement_timeout_ms)
        self._max_connections = max_connections
        self._pool: Any = None
        self._lock = asyncio.Lock()

    async def run(self, sql: str) -> QueryResult:
        """Run the query in a READ ONLY transaction that is always rolled back."""
        # The client-side deadline is a backstop for a hung network; the server's timeout fires first.
        deadline_s = self._timeout_ms / 1000 + 5
        try:
            async with asyncio.timeout(deadline_s):
                return await self._run(sql)
        except TimeoutError:
            raise QueryFailed(f"the database did not answer within {deadline_s:.0f} s") from None
        except asyncpg.QueryCanceledError:
            raise QueryFailed(f"the query ran longer than {self._timeout_ms} ms and was cancelled") from None
        except asyncpg.InsufficientPrivilegeError as exc:
            raise QueryFailed(f"{exc} (the query runs as a role that may only read the demo tables)") from None
        except asyncpg.ReadOnlySQLTransactionError as exc:
            raise QueryFailed(f"{exc} (queries run in a read-only transaction)") from None
        except asyncpg.PostgresError as exc:
            if isinstance(exc, _UNAVAILABLE):
                raise QueryFailed("the demo database is not available (has `agentkit seed-demo` run?)") from None
            raise QueryFailed(f"the database refused the query: {exc}") from None
        except _UNAVAILABLE:
            raise QueryFailed("the demo database is not reachable") from None

    async def _run(self, sql: str) -> QueryResult:
        pool = await self._get_pool()
        async with pool.acquire() as conn:
            transaction = conn.transaction(readonly=True)
            await transaction.start()
            try:
                await conn.execute(f"SET LOCAL statement_timeout = {self._timeout_ms}")
                statement = await conn.prepare(sql)
                columns = tuple(attribute.name for attribute in statement.get_attributes())
                cursor = await statement.cursor()
                records = await cursor.fetch(self._row_limit + 1)
            finally:
                await transaction.rollback()
        rows = tuple(tuple(record) for record in records[: self._row_limit])
        return QueryResult(columns=columns, rows=rows, truncated=len(records) > self._row_limit)

    async def _get_pool(self) -> Any:
        async with self._lock:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=self._max_connections,
                    statement_cache_size=0,  # model-written queries are not worth caching
                    server_settings={
                        # Also set on the role by the seed; repeated here for a role set up by hand.
                        "default_transaction_read_only": "on",
                        "statement_timeout": str(self._timeout_ms),
                        "application_name": "agentkit-sql-readonly",
                    },
                )
            return self._pool

    async def aclose(self) -> None:
        """Close the pool, if one was opened."""
        async with self._lock:
            if self._pool is not None:
                await self._pool.close()
                self._pool = None
