"""`call_within`: await a tool's coroutine under a time limit, arming a timer only if the tool waits.

Most async tools answer without ever waiting (a lookup in memory, a computation): their first step
returns. A timer armed and cancelled for each of those is pure cost (a heap entry, a handle and its
cancellation; left in the event loop's heap until it is next cleaned), so the first step runs at
once, as an eager task would, and only a tool that suspends goes on under `asyncio.timeout`. What
the tool sees does not change: the same task, the same context, the same cancellation.
"""

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class TimeLimitPassed(Exception):
    """The tool was still running when its time limit passed (it was cancelled)."""


async def call_within(coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
    """The coroutine's result; the tool's own exceptions propagate as they would from `await coro`.

    Raises:
        TimeLimitPassed: it suspended and did not finish within `timeout_s`; it was cancelled.
    """
    started = asyncio.get_running_loop().time()  # the limit counts the first step too
    try:
        waiting_on = coro.send(None)
    except StopIteration as finished:
        return finished.value  # type: ignore[no-any-return]  # done without waiting: no timer was needed
    deadline = asyncio.timeout_at(started + timeout_s)
    try:
        async with deadline:
            return await _Resumed(coro, waiting_on)
    except TimeoutError:
        if deadline.expired():
            raise TimeLimitPassed(f"did not finish within {timeout_s:g} s") from None
        raise  # the tool's own timeout (a socket's, say), not ours


class _Resumed(Generic[T]):
    """Awaits a coroutine that has already taken its first step and is waiting on `waiting_on`.

    It passes what the coroutine waits on up to the task, and what the task sends or throws back
    down to the coroutine, as `await` does: what `yield from` would do, had the first step not
    been taken already.
    """

    __slots__ = ("_coro", "_waiting_on")

    def __init__(self, coro: Coroutine[Any, Any, T], waiting_on: Any) -> None:
        self._coro = coro
        self._waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, T]:
        coro, waiting_on = self._coro, self._waiting_on
        while True:
            try:
                sent = yield waiting_on
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # thrown in by the task (a cancellation): the tool's to handle
                try:
                    waiting_on = coro.throw(exc)
                except StopIteration as finished:
                    return finished.value  # type: ignore[no-any-return]
            else:
                try:
                    waiting_on = coro.send(sent)
                except StopIteration as finished:
                    return finished.value  # type: ignore[no-any-return]
