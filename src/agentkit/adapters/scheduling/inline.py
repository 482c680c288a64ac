"""Inline scheduling: the API process runs each run as an asyncio task."""

import asyncio
import functools

import structlog

from agentkit.adapters.scheduling.sweeper import LeaseSweeper
from agentkit.application.agent.loop import AgentLoop
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_scheduler import RunScheduler, WaitResult
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run

logger = structlog.get_logger(__name__)


class InlineRunScheduler(RunScheduler, RunAdmission):
    """Runs each submitted run as a task of this process's event loop.

    The task's outcome is persisted by the loop itself; this class only keeps the tasks so that
    waits can await them and shutdown can let them finish (or interrupt them, which the loop
    records as `failed: interrupted`).

    It is also the admission count, since it knows what runs here: runs in flight are the running
    tasks plus the places reserved for runs being stored; with `max_in_flight` set, no reservation
    is granted past it. A task frees its place when it ends, whatever the outcome.

    Args:
        loop: Executes the runs.
        max_in_flight: Runs this process takes on at once (None: no cap).
        sweeper: Ends the runs whose executor died (any process's), while the scheduler is started.
    """

    def __init__(
        self, loop: AgentLoop, *, max_in_flight: int | None = None, sweeper: LeaseSweeper | None = None
    ) -> None:
        self._loop = loop
        self._sweeper = sweeper
        self._tasks: dict[RunId, asyncio.Task[Run]] = {}
        self._stopping = asyncio.Event()
        self._drain: asyncio.Task[None] | None = None
        self._max_in_flight = max_in_flight
        self._reserved = 0

    @property
    def accepting(self) -> bool:
        """False once shutdown began."""
        return not self._stopping.is_set()

    def try_reserve(self) -> bool:
        """Take a place for a run about to be stored, if the cap leaves one."""
        if not self.has_room():
            return False
        self._reserved += 1
        return True

    def has_room(self) -> bool:
        """Whether the cap leaves a place free now."""
        return self._max_in_flight is None or self._reserved + len(self._tasks) < self._max_in_flight

    def release(self) -> None:
        """Give back a reserved place (the run's task, if it was submitted, now holds one of its own)."""
        self._reserved = max(self._reserved - 1, 0)

    def submit(self, run: Run) -> None:
        """Start the run in the background."""
        task = asyncio.create_task(self._loop.run(run), name=f"run-{run.id}")
        self._tasks[run.id] = task
        task.add_done_callback(functools.partial(self._finished, run.id))

    def notify_cancel(self, run_id: RunId) -> None:
        """Pass the cancel to the loop (it ignores runs it does not hold)."""
        self._loop.request_cancel(run_id)

    async def wait(self, run_id: RunId, timeout_s: float) -> WaitResult:
        """Wait for the run's task; the ended run comes back with the result, no read needed."""
        task = self._tasks.get(run_id)
        if task is None:
            return WaitResult(here=False)
        if not task.done() and not self._stopping.is_set():
            stopping = asyncio.ensure_future(self._stopping.wait())
            try:
                await asyncio.wait({task, stopping}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
        if not task.done() or task.cancelled() or task.exception() is not None:
            return WaitResult(here=True)
        return WaitResult(here=True, run=task.result())

    async def start(self) -> None:
        """Begin the background duties: the lease sweeper."""
        if self._sweeper is not None:
            self._sweeper.start()

    def begin_shutdown(self, grace_s: float) -> None:
        """Refuse new runs, wake every wait, and give running runs `grace_s` from now."""
        if self._drain is None:
            self._stopping.set()
            self._drain = asyncio.create_task(self._drain_runs(grace_s), name="agentkit-scheduler-drain")

    async def shutdown(self, grace_s: float) -> None:
        """Wait for the drain `begin_shutdown` started (starting it now if need be)."""
        self.begin_shutdown(grace_s)
        if self._sweeper is not None:
            await self._sweeper.stop()
        assert self._drain is not None  # noqa: S101 - begin_shutdown set it
        await self._drain

    async def _drain_runs(self, grace_s: float) -> None:
        """Give running runs `grace_s` to finish, then cancel the rest (they persist `failed`)."""
        tasks = list(self._tasks.values())
        if not tasks:
            return
        logger.info("scheduler_draining", runs=len(tasks), grace_s=grace_s)
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
            logger.warning("runs_interrupted_at_shutdown", runs=len(pending))

    def _finished(self, run_id: RunId, task: asyncio.Task[Run]) -> None:
        self._tasks.pop(run_id, None)
        if not task.cancelled() and task.exception() is not None:
            logger.error("run_task_failed", run_id=run_id, error=repr(task.exception()))
