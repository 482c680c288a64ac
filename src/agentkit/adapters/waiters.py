"""EndWaiters: this process's waiters for run ends, shared by the in-memory and the Redis run events."""

import asyncio
import contextlib
from collections.abc import Callable, Iterator

import structlog

from agentkit.application.ports.run_events import EndWaiter
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run

logger = structlog.get_logger(__name__)


class _Waiter(EndWaiter):
    """One wait: an event set on word of the end, and the run when it ended in this process."""

    __slots__ = ("_event", "_run")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._run: Run | None = None

    async def wait(self, timeout_s: float) -> bool:
        """Wait for word of the end, up to `timeout_s`."""
        try:
            async with asyncio.timeout(max(timeout_s, 0)):
                await self._event.wait()
        except TimeoutError:
            return False
        self._event.clear()  # a later word (a resumed run's end) wakes it again
        return True

    @property
    def run(self) -> Run | None:
        """The ended run, if it ended here."""
        return self._run

    def wake(self, run: Run | None) -> None:
        if run is not None:
            self._run = run
        self._event.set()


class EndWaiters:
    """The open waiters by run id, and the cancel handlers; delivers what an event source heard."""

    def __init__(self) -> None:
        self._waiters: dict[RunId, set[_Waiter]] = {}
        self._cancel_handlers: list[Callable[[RunId], None]] = []
        self._follow_handlers: list[Callable[[RunId], None]] = []

    @contextlib.contextmanager
    def watch(self, run_id: RunId) -> Iterator[EndWaiter]:
        """Open a waiter for the run's end; it is closed when the block ends."""
        waiter = _Waiter()
        self._waiters.setdefault(run_id, set()).add(waiter)
        try:
            yield waiter
        finally:
            waiters = self._waiters.get(run_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[run_id]

    def ended(self, run_id: RunId, run: Run | None = None) -> None:
        """Word of the run's end came (with the run itself, when it ended in this process)."""
        for waiter in self._waiters.get(run_id, ()):
            waiter.wake(run)

    def wake_all(self) -> None:
        """Wake every waiter (the process is stopping)."""
        for waiters in self._waiters.values():
            for waiter in waiters:
                waiter.wake(None)

    def add_cancel_handler(self, handler: Callable[[RunId], None]) -> None:
        """Call `handler` for every cancel heard."""
        self._cancel_handlers.append(handler)

    def cancelled(self, run_id: RunId) -> None:
        """Word of a cancel came: pass it to every handler (one that fails is logged)."""
        _tell(self._cancel_handlers, run_id, "cancel_handler_failed")

    def add_follow_handler(self, handler: Callable[[RunId], None]) -> None:
        """Call `handler` for every run someone follows."""
        self._follow_handlers.append(handler)

    def followed(self, run_id: RunId) -> None:
        """Word that someone follows a run came: pass it to every handler."""
        _tell(self._follow_handlers, run_id, "follow_handler_failed")


def _tell(handlers: list[Callable[[RunId], None]], run_id: RunId, failure: str) -> None:
    for handler in handlers:
        try:
            handler(run_id)
        except Exception:
            logger.warning(failure, run_id=run_id, exc_info=True)


class LocalDelivery:
    """What both run-event adapters do in this process: waiters, cancel handlers, waking them all.

    The adapters add how an event reaches the other processes (or that there are none).
    """

    def __init__(self) -> None:
        self._waiters = EndWaiters()

    def on_cancel(self, handler: Callable[[RunId], None]) -> None:
        """Register a cancel handler."""
        self._waiters.add_cancel_handler(handler)

    def on_followed(self, handler: Callable[[RunId], None]) -> None:
        """Register a handler of runs someone follows."""
        self._waiters.add_follow_handler(handler)

    def watch_end(self, run_id: RunId) -> contextlib.AbstractContextManager[EndWaiter]:
        """A waiter for the run's end."""
        return self._waiters.watch(run_id)

    def interrupt_waits(self) -> None:
        """Wake every waiter."""
        self._waiters.wake_all()
