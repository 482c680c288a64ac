"""Driver errors that mean "the store is down", turned into the application's StoreUnavailable.

A store adapter's method either works, raises one of the application's own errors, or, when the
server cannot be reached or cannot serve now, raises StoreUnavailable (an HTTP 503 with
Retry-After, a retry in the loop). Everything else, a programming error included, passes through
unchanged and ends as a logged 500: hiding a bug behind "try again later" would make it look transient.

What counts as an outage was found by stopping, killing, freezing and restarting real servers under
load (tests/faults) and reading what arrived:

- PostgreSQL: connection refused or reset (`OSError`), a connection that dies mid-query (asyncpg's
  ConnectionDoesNotExistError, SQLSTATE 08003, or an asyncpg protocol error on a closed socket, which
  SQLAlchemy marks `connection_invalidated`), a server shutting down or starting up (57P03
  CannotConnectNowError), a backend terminated by an administrator or a fast shutdown (57P01
  AdminShutdownError), timeouts (`TimeoutError` from asyncpg's connect and command timeouts, SQLAlchemy's
  pool TimeoutError), and a server short of resources (class 53, too many connections).
- PostgreSQL answering, but not with this process's database: it does not exist (3D000
  InvalidCatalogNameError: dropped, being restored, or misnamed), was dropped under the connection
  (57P04), or refuses the credentials (class 28: a wrong password, a role or pg_hba entry that is
  gone, as when a secret is rotated on one side first). These are configuration, not bugs in the
  code: every connection fails alike, /health says so, and a caller can only wait for an operator,
  the way it waits out a server that is down. So they are outages too (a 503, and runs keep
  retrying their writes until the database is back). `agentkit serve` and `agentkit worker` check
  their database at start-up, so a process never starts on one of these.
- Redis: ConnectionError (BusyLoadingError, "LOADING", is one), TimeoutError, and the replies of a
  server that cannot take the command now: READONLY (a replica during a failover), MASTERDOWN,
  TRYAGAIN, CLUSTERDOWN, BUSY, NOREPLICAS, OOM.
"""

import functools
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, Final, ParamSpec, TypeVar

import asyncpg  # type: ignore[import-untyped]
from redis.exceptions import ClusterDownError, OutOfMemoryError, ReadOnlyError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError as RedisResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from agentkit.application.errors import StoreUnavailable

P = ParamSpec("P")
R = TypeVar("R")

# Exception types that are an outage whatever they say. OSError covers refused, reset and unreachable
# connections and DNS failures; TimeoutError is asyncio's too (one class since Python 3.11).
_OUTAGE_TYPES: Final = (
    OSError,
    TimeoutError,
    PoolTimeoutError,  # no pooled connection came free within pool_timeout
    DisconnectionError,
    OperationalError,  # DB-API's "not the programmer's fault" class (asyncpg itself does not use it)
    RedisConnectionError,
    RedisTimeoutError,
    # replies redis-py parses into classes of their own (the prefix is gone from the message then)
    ReadOnlyError,
    TryAgainError,
    ClusterDownError,  # MASTERDOWN too
    OutOfMemoryError,
)
# SQLSTATE classes and codes of a server that is unreachable, going away, starting, overloaded or
# timing a statement out: the same request may succeed a moment later.
_OUTAGE_SQLSTATE_CLASSES: Final = frozenset(
    {
        "08",  # connection exception
        "28",  # invalid authorization: a wrong password (28P01), an unknown role or no pg_hba entry (28000)
        "53",  # insufficient resources
        "58",  # system error
    }
)
_OUTAGE_SQLSTATES: Final = frozenset(
    {
        "57P01",  # admin_shutdown: "terminating connection due to administrator command"
        "57P02",  # crash_shutdown
        "57P03",  # cannot_connect_now: "the database system is shutting down / starting up"
        "57P04",  # database_dropped
        "3D000",  # invalid_catalog_name: "database ... does not exist" (on connect)
        "57P05",  # idle_session_timeout
        "57014",  # query_canceled: a statement that ran into a timeout
        "40001",  # serialization_failure
        "40P01",  # deadlock_detected
        "55P03",  # lock_not_available
        "25006",  # read_only_sql_transaction: a standby that is not (yet) the primary
    }
)
_REDIS_BUSY_REPLIES: Final = (
    "READONLY",
    "MASTERDOWN",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "BUSY ",
    "NOREPLICAS",
    "LOADING",
    "OOM ",
)
_CHAIN_DEPTH: Final = 8


def _causes(exc: BaseException) -> list[BaseException]:
    # SQLAlchemy wraps the driver's error (`.orig`), which wraps asyncpg's (`raise ... from`: `__cause__`).
    # Not `__context__`: a bug raised while some outage was being handled is still a bug.
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < _CHAIN_DEPTH and current not in chain:
        chain.append(current)
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else current.__cause__
    return chain


def _is_outage_itself(exc: BaseException) -> bool:
    if isinstance(exc, _OUTAGE_TYPES):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True  # SQLAlchemy saw the connection die under the statement
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and (sqlstate[:2] in _OUTAGE_SQLSTATE_CLASSES or sqlstate in _OUTAGE_SQLSTATES):
        return True
    if isinstance(exc, asyncpg.exceptions.InterfaceError) and "connection is closed" in str(exc):
        return True  # other asyncpg InterfaceErrors (bad arguments, misuse) are bugs
    return isinstance(exc, RedisResponseError) and str(exc).startswith(_REDIS_BUSY_REPLIES)


def is_outage(exc: BaseException) -> bool:
    """Whether `exc`, or an error it wraps, means the store cannot serve now (rather than a bug)."""
    return any(_is_outage_itself(link) for link in _causes(exc))


def unavailable(store: str, exc: BaseException) -> StoreUnavailable:
    """The StoreUnavailable that reports `exc` as an outage of `store`, named by its most specific cause."""
    cause = [link for link in _causes(exc) if _is_outage_itself(link)][-1:] or [exc]
    return StoreUnavailable(f"{store} is unavailable ({type(cause[0]).__name__})")


def outage_cause(exc: BaseException) -> str:
    """What the server or the network said, for an operator: the most specific outage cause in `exc`'s chain
    with its message, such as `database "x" does not exist (InvalidCatalogNameError)`.

    Not for HTTP answers: a server's message may name databases, roles and addresses.
    """
    chain = _causes(exc)
    cause = ([link for link in chain if _is_outage_itself(link)] or chain)[-1]
    message = str(cause).strip()
    return f"{message} ({type(cause).__name__})" if message else type(cause).__name__


def store_outage(store: str) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """Decorate an adapter method so an outage of `store` surfaces as StoreUnavailable."""

    def decorate(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(method)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await method(*args, **kwargs)
            except StoreUnavailable:
                raise
            except Exception as exc:
                if is_outage(exc):
                    raise unavailable(store, exc) from exc
                raise

        return guarded

    return decorate


class OutageWatch:
    """Remembers when this process last lost, and found again, its connection to a store.

    The sweeper reads it: a lease that lapsed while the store was unreachable says nothing about
    its executor (the executor could not renew it either), so such runs are left alone until live
    executors have had `grace_s` to renew their leases after the store came back.

    Args:
        grace_s: How long after the store is back a lapse during the outage is forgiven: enough for
            the lease keepers' retries (a second or so) to land.
        clock: Wall time (the leases' clock); tests pass their own.
    """

    def __init__(self, *, grace_s: float = 5.0, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.grace = timedelta(seconds=grace_s)
        self._clock = clock
        self.down_since: datetime | None = None  # the first failure of the current (or last) outage
        self.back_at: datetime | None = None  # the first success after it

    def failed(self) -> None:
        """A call found the store unavailable."""
        if self.down_since is None or self.back_at is not None:
            self.down_since, self.back_at = self._clock(), None

    def answered(self) -> None:
        """A call was served."""
        if self.down_since is not None and self.back_at is None:
            self.back_at = self._clock()

    def lapse_cutoff(self, now: datetime) -> datetime:
        """Leases that lapsed before this count as dead: `now`, or the outage's start during one and its grace."""
        if self.down_since is None or (self.back_at is not None and now - self.back_at >= self.grace):
            return now
        return min(now, self.down_since)
