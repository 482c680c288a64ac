"""Driver errors that mean "the store is down", turned into the application's StoreUnavailable."""

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from agentkit.application.errors import StoreUnavailable

P = ParamSpec("P")
R = TypeVar("R")

# Connection refused or reset, timeouts, no pooled connection free in time, a server that went away:
# not the request's fault.
_OUTAGES = (
    OSError,
    TimeoutError,
    OperationalError,
    InterfaceError,
    PoolTimeoutError,
    RedisConnectionError,
    RedisTimeoutError,
)


def store_outage(store: str) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """Decorate an adapter method so an outage of `store` surfaces as StoreUnavailable."""

    def decorate(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(method)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await method(*args, **kwargs)
            except _OUTAGES as exc:
                raise StoreUnavailable(f"{store} is unavailable ({type(exc).__name__})") from exc

        return guarded

    return decorate
