"""In-memory RunEvents: for a service whose state lives in one process."""

from collections.abc import Callable
from contextlib import AbstractContextManager

from agentkit.adapters.waiters import EndWaiters
from agentkit.application.ports.run_events import EndWaiter, RunEvents
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class InMemoryRunEvents(RunEvents):
    """Delivers every event at once to this process's waiters and cancel handlers."""

    def __init__(self) -> None:
        self._waiters = EndWaiters()

    async def start(self) -> None:
        """Nothing to subscribe to."""

    async def aclose(self) -> None:
        """Nothing to close."""

    async def publish_ended(self, run: Run) -> None:
        """Wake the run's waiters, handing them the run."""
        self._waiters.ended(run.id, run)

    async def publish_cancel(self, run_id: RunId) -> None:
        """Tell the cancel handlers."""
        self._waiters.cancelled(run_id)

    def on_cancel(self, handler: Callable[[RunId], None]) -> None:
        """Register a cancel handler."""
        self._waiters.add_cancel_handler(handler)

    def watch_end(self, run_id: RunId) -> AbstractContextManager[EndWaiter]:
        """A waiter for the run's end."""
        return self._waiters.watch(run_id)

    def interrupt_waits(self) -> None:
        """Wake every waiter."""
        self._waiters.wake_all()
