"""Capped exponential backoff with full jitter, and `until_stored`: retry a store write through an outage."""

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog

from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.clock import Clock

logger = structlog.get_logger(__name__)

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
"""`asyncio.sleep`, or a test's fake that moves a clock instead."""


class Backoff:
    """How long to wait before the n-th retry: a random time up to `min(cap_s, first_s * 2**(n-1))`.

    Full jitter (every wait drawn from zero up to the bound) spreads the retries of many runs that
    failed at the same moment, so a store that comes back is not hit by all of them at once.

    Args:
        first_s: The bound of the first wait.
        cap_s: The largest bound; the waits stop growing there, so a store that comes back is noticed
            within `cap_s`.
        jitter: A number in [0, 1) per wait; tests pass a constant.
    """

    def __init__(
        self, *, first_s: float = 0.1, cap_s: float = 2.0, jitter: Callable[[], float] = random.random
    ) -> None:
        self.first_s = first_s
        self.cap_s = cap_s
        self._jitter = jitter

    def delay(self, retry: int) -> float:
        """The wait before retry number `retry` (1 for the first)."""
        bound: float = min(self.cap_s, self.first_s * 2.0 ** min(retry - 1, 30))
        return bound * self._jitter()


async def until_stored(
    write: Callable[[], Awaitable[T]],
    *,
    what: str,
    deadline: float,
    clock: Clock,
    sleep: Sleep,
    backoff: Backoff,
) -> T:
    """Call `write` until it returns, retrying StoreUnavailable with backoff until `deadline`.

    Any other error (StaleAttempt included: a newer attempt owns the run, so retrying cannot help)
    is raised at once.

    Args:
        write: The write to try; called again for each retry.
        what: Names the write in the log.
        deadline: `clock.monotonic()` past which the last StoreUnavailable is raised.
        clock: Tells the time against `deadline`.
        sleep: Waits between attempts.
        backoff: How long each wait is.
    """
    retry = 0
    while True:
        try:
            return await write()
        except StoreUnavailable as exc:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                raise
            retry += 1
            if retry & (retry - 1) == 0:  # the 1st, 2nd, 4th, 8th... retry: a long outage does not flood the log
                logger.warning("store_write_retrying", write=what, retry=retry, error=str(exc))
            await sleep(min(backoff.delay(retry), remaining))


class RetryPacing:
    """How a run paces its retries of a store write through an outage: the waits, and what waits.

    Args:
        sleep: Waits between tries (tests pass a fake that moves a clock).
        backoff: How long each wait is.
    """

    __slots__ = ("backoff", "sleep")

    def __init__(self, *, sleep: Sleep | None = None, backoff: Backoff | None = None) -> None:
        self.sleep: Sleep = sleep or asyncio.sleep
        self.backoff = backoff or Backoff()
