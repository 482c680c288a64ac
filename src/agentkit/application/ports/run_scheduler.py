"""The RunScheduler port: who executes accepted runs, and how to wait for one to end."""

from abc import abstractmethod
from typing import Protocol

import msgspec

from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class WaitResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a wait found.

    Attributes:
        here: The run executes in this process (else nothing here can tell when it ends).
        run: The run as it ended, when it ended within the wait.
    """

    here: bool
    run: Run | None = None


class RunScheduler(Protocol):
    """Executes pending runs in the background (inline tasks, or workers behind a queue)."""

    @abstractmethod
    async def start(self) -> None:
        """Begin the scheduler's background duties (such as ending the runs of executors that died)."""

    @abstractmethod
    def submit(self, run: Run) -> None:
        """Start executing a stored pending run; returns at once."""

    @abstractmethod
    def notify_cancel(self, run_id: RunId) -> None:
        """A cancel was stored for this run: if it executes here, stop it at its next step boundary."""

    @abstractmethod
    async def wait(self, run_id: RunId, timeout_s: float) -> WaitResult:
        """Wait up to `timeout_s` for a run executing here to end."""

    @property
    @abstractmethod
    def accepting(self) -> bool:
        """Whether new runs may be submitted (false once shutdown began)."""

    @abstractmethod
    def begin_shutdown(self, grace_s: float) -> None:
        """Stop taking runs, end every wait at once, and start the runs' grace period now.

        Called the moment the process is told to stop, so waiting requests answer with the run's
        current state instead of holding the shutdown up, and the grace runs alongside them.
        """

    @abstractmethod
    async def shutdown(self, grace_s: float) -> None:
        """Let running runs finish within the grace period, then interrupt the rest (they record why).

        Begins the shutdown first if `begin_shutdown` was not called; the grace counts from then.
        """
