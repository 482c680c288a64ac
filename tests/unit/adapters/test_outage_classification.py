"""Which driver errors are an outage (StoreUnavailable, a 503) and which are bugs (left to be a logged 500).

The errors here are the ones that arrived from real servers being stopped, killed, frozen and
restarted under load (tests/faults), built by hand so every class is covered on every run.
"""

import socket

import asyncpg  # type: ignore[import-untyped]
import pytest
import redis.exceptions as redis_errors
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, ProgrammingError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from agentkit.adapters.outage import is_outage, outage_cause, store_outage, unavailable
from agentkit.application.errors import StaleAttempt, StoreUnavailable


class DriverError(Exception):
    """SQLAlchemy's asyncpg adapter error: carries the SQLSTATE, and asyncpg's error as its cause."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.sqlstate = getattr(cause, "sqlstate", None)
        self.__cause__ = cause


def wrapped(cause: BaseException, *, invalidated: bool = False, kind: type[DBAPIError] = DBAPIError) -> DBAPIError:
    """The error SQLAlchemy raises for `cause`, as it arrives at an adapter."""
    return kind("SELECT 1", {}, DriverError(cause), connection_invalidated=invalidated)


OUTAGES = {
    "connection refused": ConnectionRefusedError(111, "Connect call failed"),
    "connection reset": ConnectionResetError(104, "Connection reset by peer"),
    "connection lost": ConnectionError("unexpected connection_lost() call"),
    "no such host": socket.gaierror(-2, "Name or service not known"),
    "connect or command timeout": TimeoutError(),
    "asyncio timeout (the same class)": TimeoutError("timed out"),
    "pool timeout": PoolTimeoutError("QueuePool limit of size 10 overflow 0 reached"),
    "closed mid-query (08003)": wrapped(asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed")),
    "closed mid-query, invalidated": wrapped(
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"), invalidated=True
    ),
    "protocol error on a dead socket": wrapped(
        asyncpg.exceptions.InternalClientError("cannot switch to state 15"), invalidated=True
    ),
    "shutting down (57P03)": wrapped(asyncpg.exceptions.CannotConnectNowError("the database system is shutting down")),
    "starting up (57P03)": wrapped(asyncpg.exceptions.CannotConnectNowError("the database system is starting up")),
    "admin shutdown (57P01)": wrapped(
        asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command")
    ),
    "crash shutdown (57P02)": wrapped(asyncpg.exceptions.CrashShutdownError("terminating connection")),
    "too many connections (53300)": wrapped(asyncpg.exceptions.TooManyConnectionsError("too many clients")),
    "statement timeout (57014)": wrapped(asyncpg.exceptions.QueryCanceledError("canceling statement")),
    "deadlock (40P01)": wrapped(asyncpg.exceptions.DeadlockDetectedError("deadlock detected")),
    "read-only standby (25006)": wrapped(asyncpg.exceptions.ReadOnlySQLTransactionError("read-only transaction")),
    "asyncpg: connection is closed": asyncpg.exceptions.InterfaceError("connection is closed"),
    # the server answers, but not with this process's database: every connection is refused alike
    "no such database (3D000)": wrapped(asyncpg.exceptions.InvalidCatalogNameError('database "x" does not exist')),
    "database dropped (57P04)": wrapped(asyncpg.exceptions.DatabaseDroppedError("database dropped")),
    "wrong password (28P01)": wrapped(asyncpg.exceptions.InvalidPasswordError("password authentication failed")),
    "no pg_hba entry or role (28000)": wrapped(
        asyncpg.exceptions.InvalidAuthorizationSpecificationError('role "x" does not exist')
    ),
    "redis connection": redis_errors.ConnectionError("Error 111 connecting to 127.0.0.1:6379"),
    "redis timeout": redis_errors.TimeoutError("Timeout reading from socket"),
    "redis loading": redis_errors.BusyLoadingError("Redis is loading the dataset in memory"),
    "redis read-only replica": redis_errors.ReadOnlyError("You can't write against a read only replica."),
    "redis masterdown": redis_errors.ResponseError("MASTERDOWN Link with MASTER is down"),
    "redis tryagain": redis_errors.ResponseError("TRYAGAIN Multiple keys request during rehashing"),
    "redis busy script": redis_errors.ResponseError("BUSY Redis is busy running a script."),
    "redis out of memory": redis_errors.ResponseError("OOM command not allowed when used memory > 'maxmemory'."),
}

BUGS = {
    "undefined column": wrapped(
        asyncpg.exceptions.UndefinedColumnError("column x does not exist"), kind=ProgrammingError
    ),
    "unique violation": wrapped(asyncpg.exceptions.UniqueViolationError("duplicate key"), kind=IntegrityError),
    "bad argument": wrapped(asyncpg.exceptions.DataError("invalid input for query argument $1"), kind=InterfaceError),
    "invalid text": wrapped(asyncpg.exceptions.CharacterNotInRepertoireError("invalid byte sequence")),
    "asyncpg misuse": asyncpg.exceptions.InterfaceError("cannot perform operation: another operation is in progress"),
    "redis wrong type": redis_errors.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
    "redis script error": redis_errors.ResponseError("ERR Error running script"),
    "our own bug": TypeError("unsupported operand"),
    "a key error": KeyError("id"),
}


@pytest.mark.parametrize("error", OUTAGES.values(), ids=OUTAGES.keys())
def test_connection_level_failures_are_outages(error: BaseException) -> None:
    assert is_outage(error)


@pytest.mark.parametrize("error", BUGS.values(), ids=BUGS.keys())
def test_programming_errors_are_not(error: BaseException) -> None:
    assert not is_outage(error)


def test_an_outage_is_reported_by_its_most_specific_cause() -> None:
    error = wrapped(asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"))

    assert str(unavailable("PostgreSQL", error)) == "PostgreSQL is unavailable (AdminShutdownError)"


async def test_an_operator_is_told_what_the_server_said_behind_the_store_unavailable() -> None:
    @store_outage("PostgreSQL")
    async def raising(error: BaseException) -> None:
        raise error

    with pytest.raises(StoreUnavailable) as missing:
        await raising(wrapped(asyncpg.exceptions.InvalidCatalogNameError('database "shop" does not exist')))
    with pytest.raises(StoreUnavailable) as silent:
        await raising(TimeoutError())

    assert outage_cause(missing.value) == 'database "shop" does not exist (InvalidCatalogNameError)'
    assert outage_cause(silent.value) == "TimeoutError"


async def test_the_decorator_turns_outages_into_store_unavailable_and_lets_the_rest_through() -> None:
    @store_outage("PostgreSQL")
    async def raising(error: BaseException) -> None:
        raise error

    with pytest.raises(StoreUnavailable, match=r"^PostgreSQL is unavailable \(ConnectionRefusedError\)$"):
        await raising(ConnectionRefusedError(111, "refused"))
    with pytest.raises(ProgrammingError):
        await raising(BUGS["undefined column"])
    with pytest.raises(StaleAttempt):
        await raising(StaleAttempt("a newer attempt owns the run"))


def test_a_bug_raised_while_an_outage_was_handled_is_still_a_bug() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "refused")
        except ConnectionRefusedError:
            raise TypeError("a bug in the handler") from None
    except TypeError as bug:
        error = bug

    assert not is_outage(error)
