"""The RunEvents port: word that a run ended, or is to cancel, reaching every process of the service."""

from abc import abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class EndWaiter(Protocol):
    """One wait for one run's end, open for as long as its `watch_end` block lasts."""

    @abstractmethod
    async def wait(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for word of the end; whether it came (or waits were interrupted)."""

    @property
    @abstractmethod
    def run(self) -> Run | None:
        """The ended run itself, when it ended in this process (no read needed); else None."""


class RunEvents(Protocol):
    """Publishes run ends, cancels and followers; delivers them to the waiters and executors of every process.

    Delivery is at most once and may be lost (a broker restart): waiters re-read the run now and then
    (`application.runs.waiting`), and a cancel is also stored on the run, where the executor's lease
    renewal finds it. Events make both fast, the store makes both certain.
    """

    @abstractmethod
    async def start(self) -> None:
        """Begin receiving events (a subscription); idempotent."""

    @abstractmethod
    async def aclose(self) -> None:
        """Stop receiving events."""

    @abstractmethod
    async def publish_ended(self, run: Run) -> None:
        """Say that the run reached a terminal status (or was handed back); never raises."""

    @abstractmethod
    async def publish_cancel(self, run_id: RunId) -> None:
        """Say that a cancel was stored for this run; never raises."""

    @abstractmethod
    def on_cancel(self, handler: Callable[[RunId], None]) -> None:
        """Call `handler` with the id of every run a cancel is published for (an executor's hook)."""

    @abstractmethod
    async def publish_followed(self, run_id: RunId) -> None:
        """Say that a client follows the run's events now (its executor streams); never raises."""

    @abstractmethod
    def on_followed(self, handler: Callable[[RunId], None]) -> None:
        """Call `handler` with the id of every run someone follows (an executor's hook)."""

    @abstractmethod
    def watch_end(self, run_id: RunId) -> AbstractContextManager[EndWaiter]:
        """A waiter for the run's end: open it before reading the run, so no end slips between."""

    @abstractmethod
    def interrupt_waits(self) -> None:
        """Wake every waiter now (the process is stopping)."""
