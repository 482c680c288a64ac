"""CallSlots: at most so many tool calls at once in this process; the others wait their turn."""

import asyncio
from collections import deque


class CallSlots:
    """A counter of free places, with a queue of waiters served first come, first served.

    Not an `asyncio.Semaphore`: taking a free place is a plain decrement (no coroutine, which every
    tool call would pay), and no event loop is bound to it (a registry outlives the loops of tests
    and benchmarks).

    Args:
        limit: The calls that may run at once.
    """

    __slots__ = ("_free", "_waiters", "limit")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"at least one call must be able to run, got {limit}")
        self.limit = limit
        self._free = limit
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def in_use(self) -> int:
        """The places taken now."""
        return self.limit - self._free

    def take_now(self) -> bool:
        """Take a place if one is free and nobody waits for it; whether it was taken."""
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return True
        return False

    async def take(self) -> None:
        """Wait for a place and take it (after those who asked before)."""
        if self.take_now():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give()  # handed a place just as it was cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    def give(self) -> None:
        """Give a place back: to the first waiter, else to the free ones."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1
