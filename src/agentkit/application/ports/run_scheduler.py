"""The RunScheduler port: who executes accepted runs (tasks of this process, or workers behind a queue)."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class RunScheduler(Protocol):
    """Hands stored runs to an executor: a new run to start, a lapsed one to resume.

    Whoever executes a run claims it first (a compare-and-set on its attempt), so a run handed out
    twice still runs once. Waiting for a run's end is not the scheduler's business: see
    `application.runs.waiting`, which works whatever process executes the run.
    """

    @abstractmethod
    async def start(self) -> None:
        """Begin the background duties (the lease sweeper, the cancel subscription)."""

    @abstractmethod
    async def submit(self, run: Run) -> None:
        """Have a stored pending run executed; returns once it is handed over (not when it ends).

        Raises:
            StoreUnavailable: the queue could not take it (queue mode); the run stays pending and the
                sweeper hands it over once its lease lapses.
        """

    @abstractmethod
    async def resume(self, run: Run) -> bool:
        """Have a lapsed run (its executor died, or handed it back) taken over; False if there is no room now."""

    @abstractmethod
    async def notify_cancel(self, run_id: RunId) -> None:
        """A cancel was stored for this run: tell its executor, wherever it runs, to stop at its next step."""

    @property
    @abstractmethod
    def accepting(self) -> bool:
        """Whether new runs may be submitted (false once shutdown began)."""

    @abstractmethod
    def begin_shutdown(self, grace_s: float) -> None:
        """Stop taking runs, end every wait at once, and start the runs' grace period now."""

    @abstractmethod
    async def shutdown(self, grace_s: float) -> None:
        """Let running runs finish within the grace period, then hand the rest back (they resume elsewhere).

        Begins the shutdown first if `begin_shutdown` was not called; the grace counts from then.
        """
