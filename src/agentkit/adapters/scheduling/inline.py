"""Inline scheduling: the process that accepted a run executes it as an asyncio task."""

import asyncio
import functools

import structlog

from agentkit.adapters.scheduling.recovery import Recovery
from agentkit.adapters.scheduling.sweeper import LeaseSweeper
from agentkit.application.agent.loop import AgentLoop
from agentkit.application.errors import StaleAttempt
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run, RunStatus

logger = structlog.get_logger(__name__)


class InlineRunScheduler(RunScheduler, RunAdmission):
    """Runs each submitted (or resumed) run as a task of this process's event loop.

    The task's outcome is persisted by the loop itself; this class keeps the tasks so shutdown can
    let them finish, or hand them back (the loop stores their trace and gives their lease up, and a
    restarted or other process resumes them). When a task ends, its run's end is published: waiters
    here get the run itself, waiters in other processes the word.

    It is also the admission count, since it knows what runs here: runs in flight are the running
    tasks plus the places reserved for runs being stored; with `max_in_flight` set, no reservation
    is granted past it, and lapsed runs are resumed only into free places.

    Args:
        loop: Executes the runs.
        events: Where run ends are published and cancels heard.
        max_in_flight: Runs this process takes on at once (None: no cap).
        recovery: Runs a sweeper beside the scheduler that resumes lapsed runs here (None: no sweeper).
    """

    def __init__(
        self,
        loop: AgentLoop,
        *,
        events: RunEvents,
        max_in_flight: int | None = None,
        recovery: Recovery | None = None,
    ) -> None:
        self._loop = loop
        self._events = events
        self._sweeper: LeaseSweeper | None = None if recovery is None else recovery.sweeper_for(self)
        self._tree = None if recovery is None else recovery.tree
        self._tasks: dict[RunId, asyncio.Task[Run | None]] = {}
        self._stopping = asyncio.Event()
        self._drain: asyncio.Task[None] | None = None
        self._max_in_flight = max_in_flight
        self._reserved = 0
        events.on_cancel(loop.request_cancel)
        events.on_followed(loop.mark_followed)

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

    async def submit(self, run: Run) -> None:
        """Start the run in the background."""
        self._spawn(run)

    async def resume(self, run: Run) -> bool:
        """Take a lapsed run over here, if there is a free place (and it is not already running here)."""
        if not self.accepting or not self.has_room():
            return False
        if run.id not in self._tasks:
            self._spawn(run)
        return True

    async def notify_cancel(self, run_id: RunId) -> None:
        """Publish the cancel: the loop hears it here at once, other processes through the events."""
        await self._events.publish_cancel(run_id)

    async def start(self) -> None:
        """Begin the background duties: the event subscription and the lease sweeper."""
        await self._events.start()
        if self._sweeper is not None:
            self._sweeper.start()

    def begin_shutdown(self, grace_s: float) -> None:
        """Refuse new runs, wake every wait, and give running runs `grace_s` from now."""
        if self._drain is None:
            self._stopping.set()
            self._events.interrupt_waits()
            self._drain = asyncio.create_task(self._drain_runs(grace_s), name="agentkit-scheduler-drain")

    async def shutdown(self, grace_s: float) -> None:
        """Wait for the drain `begin_shutdown` started (starting it now if need be)."""
        self.begin_shutdown(grace_s)
        if self._sweeper is not None:
            await self._sweeper.stop()
        assert self._drain is not None  # noqa: S101 - begin_shutdown set it
        await self._drain

    def _spawn(self, run: Run) -> None:
        task = asyncio.create_task(self._execute(run), name=f"run-{run.id}")
        self._tasks[run.id] = task
        task.add_done_callback(functools.partial(self._finished, run.id))

    async def _execute(self, run: Run) -> Run | None:
        try:
            ended = await self._loop.run(run)
        except StaleAttempt:
            return None  # another executor claimed it first (or took it over): nothing to do here
        finally:
            self._tasks.pop(run.id, None)  # its place is free before anyone hears of the end
        if self._tree is not None and (ended.parent_run_id is not None or ended.status is RunStatus.WAITING):
            await self._tree.settle(ended, self)  # start its children, or answer its parent
        await self._events.publish_ended(ended)
        return ended

    async def _drain_runs(self, grace_s: float) -> None:
        """Give running runs `grace_s` to finish, then cancel the rest (they are handed back)."""
        tasks = list(self._tasks.values())
        if not tasks:
            return
        logger.info("scheduler_draining", runs=len(tasks), grace_s=grace_s)
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
            logger.warning("runs_handed_back_at_shutdown", runs=len(pending))

    def _finished(self, run_id: RunId, task: asyncio.Task[Run | None]) -> None:
        self._tasks.pop(run_id, None)
        if not task.cancelled() and task.exception() is not None:
            logger.error("run_task_failed", run_id=run_id, error=repr(task.exception()))
