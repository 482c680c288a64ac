"""asyncpg connections taken straight from the engine's pool, for the statements a run makes.

SQLAlchemy Core costs about 300 µs of CPU per statement on top of asyncpg's own (compiling the
cache key, the execution context, the result and its rows, the adapted cursor, greenlet switches);
a run makes eight statements. The hot ones (a run's writes, the trace's batches) are therefore
fixed SQL sent by asyncpg itself, which prepares each once per connection and keeps it (its
statement cache), so a statement costs one round trip and the encoding of its arguments.

The connections are the engine's: one pool, one set of bounds (its size and wait, asyncpg's connect
and command timeouts: DATABASE_STATEMENT_TIMEOUT_S holds here too) and one set of codecs (SQLAlchemy
installs the engine's msgspec JSON codec on each connection: a JSONB argument is the JSON text,
`to_json`'s, and a JSONB column reads back decoded). A pool of the adapters' own would save about
another 40 µs a statement (SQLAlchemy's checkout and check-in), at the cost of a second set of
connections with bounds, codecs and a lifetime of their own.
"""

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.util import greenlet_spawn

from agentkit.adapters.outage import is_outage


class ConnectionLost(ConnectionError):
    """The connection to PostgreSQL closed under a statement, which failed some other way for it (an outage)."""


async def _checkout(engine: AsyncEngine) -> tuple[PoolProxiedConnection, Any]:
    while True:
        pooled = await engine.raw_connection()
        conn: Any = pooled.driver_connection
        if not conn.is_closed():
            return pooled, conn
        pooled.invalidate()  # closes nothing that is open, so it needs no I/O and no greenlet


@contextlib.asynccontextmanager
async def driver_connection(engine: AsyncEngine) -> AsyncIterator[Any]:
    """An asyncpg connection of the engine's pool, given back when the block ends.

    In autocommit (asyncpg's own mode): each statement commits by itself. SQLAlchemy looks after the
    connections it runs statements on; for one handed out raw, this does:

    - A connection the server closed while it was pooled (a restart, an administrator's
      `pg_terminate_backend`) is dropped at checkout and another taken, so it costs no call.
    - A connection found closed after an error is dropped from the pool, and the error is an outage
      (ConnectionLost where asyncpg's own error does not say so: a protocol error on a dead socket).
    - A statement cut off by a cancel (a timeout around it, the task stopping) leaves the connection
      in a state nobody knows: it is closed rather than pooled (SQLAlchemy does the same).

    Yields:
        The `asyncpg.Connection` (the driver is untyped, hence Any).
    """
    pooled, conn = await _checkout(engine)
    try:
        yield conn
    except Exception as exc:
        if not conn.is_closed():
            raise
        pooled.invalidate(exc)
        if is_outage(exc):
            raise
        raise ConnectionLost(f"the connection closed under the statement ({type(exc).__name__})") from exc
    except BaseException:
        pooled.invalidate()
        raise
    finally:
        if pooled.is_valid:
            # in a greenlet: a check-in that closes the connection (an overflow one) awaits asyncpg
            await greenlet_spawn(pooled.close)
