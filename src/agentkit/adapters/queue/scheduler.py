"""QueueRunScheduler: the API side of queue mode; runs go to a SAQ queue, workers execute them."""

import asyncio

from agentkit.adapters.queue.jobs import RunJobs
from agentkit.adapters.scheduling.recovery import Recovery
from agentkit.adapters.scheduling.sweeper import LeaseSweeper
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class QueueRunScheduler(RunScheduler, RunAdmission):
    """Hands each run to the queue; any worker, on any machine, takes it from there.

    A wait for a run's end works through the run events (Redis pub/sub), as in inline mode. A cancel
    is published for whichever worker holds the run. The queue buffers, so admission here never
    refuses: the workers' concurrency is the limit on runs in flight, and a run that waits in the
    queue waits in `pending`.

    Args:
        jobs: The queue of runs.
        events: Where cancels are published and waits woken.
        recovery: Runs a sweeper beside the scheduler that re-enqueues lapsed runs (None: no sweeper).
    """

    def __init__(self, jobs: RunJobs, *, events: RunEvents, recovery: Recovery | None = None) -> None:
        self._jobs = jobs
        self._events = events
        self._sweeper: LeaseSweeper | None = None if recovery is None else recovery.sweeper_for(self)
        self._stopping = asyncio.Event()

    @property
    def accepting(self) -> bool:
        """False once shutdown began."""
        return not self._stopping.is_set()

    def try_reserve(self) -> bool:
        """Always a place: the queue holds runs until a worker is free."""
        return True

    def has_room(self) -> bool:
        """Always room (see `try_reserve`)."""
        return True

    def release(self) -> None:
        """Nothing was reserved."""

    async def submit(self, run: Run) -> None:
        """Enqueue the stored pending run."""
        await self._jobs.enqueue(run)

    async def resume(self, run: Run) -> bool:
        """Enqueue a lapsed run again, under its current attempt (a worker resumes it)."""
        await self._jobs.enqueue(run)
        return True

    async def notify_cancel(self, run_id: RunId) -> None:
        """Publish the cancel for the worker that holds the run."""
        await self._events.publish_cancel(run_id)

    async def start(self) -> None:
        """Connect the queue, subscribe to the events, start the sweeper."""
        await self._jobs.connect()
        await self._events.start()
        if self._sweeper is not None:
            self._sweeper.start()

    def begin_shutdown(self, grace_s: float) -> None:
        """Refuse new runs and wake every wait (the runs themselves go on in the workers)."""
        if not self._stopping.is_set():
            self._stopping.set()
            self._events.interrupt_waits()

    async def shutdown(self, grace_s: float) -> None:
        """Stop the sweeper; there are no runs here to drain."""
        self.begin_shutdown(grace_s)
        if self._sweeper is not None:
            await self._sweeper.stop()
