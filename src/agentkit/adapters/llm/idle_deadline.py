"""A deadline on the waits of a stream: each wait for its next item may last at most so long.

`asyncio.timeout` around every wait would do, but it costs a timer handle made and cancelled per
item (about 6 us, measured: as much as the rest of a streamed token's way through the process).
`IdleDeadline` keeps one timer for the whole stream and re-arms it only when it fires, so a wait
costs a clock read and two stores.

Time spent outside a wait (the consumer handling the item it was given) never counts: the
deadline only cancels the task while it waits, and only that wait.
"""

import asyncio
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self, TypeVar

T = TypeVar("T")


class IdleDeadline:
    """Cancels the task's wait for a stream's next item once the wait lasts `limit_s`.

    Use it as an async context manager around the iteration, and fetch every item through `next`
    (from whichever task: the deadline cancels the task that is waiting); a wait that outlives the
    limit raises `TimeoutError`, an outside cancellation stays a cancellation.

    Args:
        limit_s: The longest a wait may last; None for no limit.
    """

    def __init__(self, limit_s: float | None) -> None:
        self._task: asyncio.Task[object] | None = None  # the task waiting now (each wait may be in another)
        self._limit_s = limit_s
        self._loop = asyncio.get_running_loop()
        self._wait_no = 0  # numbers the waits, so the timer knows whether the wait it was set for goes on
        self._waiting_since: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_wait_no = 0
        self._expired = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def next(self, items: AsyncIterator[T]) -> T:
        """The stream's next item, waited for at most `limit_s`.

        Raises:
            StopAsyncIteration: the stream has ended.
            TimeoutError: the wait lasted `limit_s`.
        """
        limit_s = self._limit_s
        task = asyncio.current_task()
        if limit_s is None or task is None:
            return await anext(items)
        self._task = task
        self._wait_no += 1
        self._waiting_since = now = self._loop.time()
        if self._timer is None:
            self._arm(now + limit_s)
        try:
            return await anext(items)
        except asyncio.CancelledError:
            if self._expired and self._take_back_cancel() == 0:
                raise TimeoutError from None
            raise
        finally:
            self._waiting_since = None
            if self._expired:  # the stream swallowed our cancellation and answered: take it back
                self._take_back_cancel()

    def _take_back_cancel(self) -> int:
        self._expired = False
        return self._task.uncancel() if self._task is not None else 0

    def _arm(self, when: float) -> None:
        self._timer_wait_no = self._wait_no
        self._timer = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer = None
        since, limit_s = self._waiting_since, self._limit_s
        if since is None or limit_s is None:  # between waits: the next wait arms the timer again
            return
        if self._timer_wait_no != self._wait_no:  # a later wait: it has its own limit from its start
            self._arm(since + limit_s)
            return
        if self._task is not None:
            self._expired = True
            self._task.cancel()
