"""RunWorker: a worker process's SAQ worker, executing the runs of the queue N at a time."""

import structlog
from saq import Worker
from saq.types import Context, PartialTimersDict

from agentkit.adapters.queue.jobs import EXECUTE_RUN, RunJobs
from agentkit.adapters.queue.scheduler import QueueRunScheduler
from agentkit.application.agent.durability import LAST_SAVE_S
from agentkit.application.agent.loop import AgentLoop
from agentkit.application.errors import StaleAttempt
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.runs.run_tree import RunTree
from agentkit.domain.ids import RunId
from agentkit.domain.run import RunStatus

logger = structlog.get_logger(__name__)

DEQUEUE_TIMEOUT_S = 1.0
"""How long an idle slot's blocking take (BLMOVE) waits for a job before it asks again."""


class RunWorker:
    """Takes run ids off the queue and executes each run with the agent loop.

    The job only names the run; the run is read and claimed (a compare-and-set on its attempt) by the
    loop, so a job for a run that ended, or that another executor holds, does nothing. The process
    also runs a lease sweeper (through its own QueueRunScheduler) that re-enqueues lapsed runs, and
    hears cancels through the run events. On SIGTERM the runs in flight get `shutdown_grace_s`,
    then are handed back (trace stored, lease given up) and the job returned to the queue, where
    another worker resumes it at once.

    Args:
        jobs: The queue of runs.
        loop: Executes a run.
        runs: Where runs are read.
        events: Publishes run ends, delivers cancels.
        scheduler: The queue scheduler whose sweeper this process runs.
        concurrency: Runs executed at once (WORKER_CONCURRENCY).
        shutdown_grace_s: How long runs in flight may finish after SIGTERM.
        lease_s: The runs' lease (RUN_LEASE_S); SAQ's own sweep of its job lists runs as often.
        tree: Starts the child runs of a run that waits on them, and hands a child's end to its parent.
    """

    def __init__(
        self,
        *,
        jobs: RunJobs,
        loop: AgentLoop,
        runs: RunRepository,
        events: RunEvents,
        scheduler: QueueRunScheduler,
        concurrency: int,
        shutdown_grace_s: float,
        lease_s: float,
        tree: RunTree | None = None,
    ) -> None:
        self._loop = loop
        self._runs = runs
        self._events = events
        self._scheduler = scheduler
        self._tree = tree
        events.on_cancel(loop.request_cancel)
        events.on_followed(loop.mark_followed)
        self.worker = Worker(
            jobs.queue,
            functions=[(EXECUTE_RUN, self.execute_run)],
            concurrency=concurrency,
            # a blocking dequeue answers the moment a job arrives; the timeout only bounds each wait
            # (the queue's Redis client waits this much longer for a reply, see QueueProvider.jobs)
            dequeue_timeout=DEQUEUE_TIMEOUT_S,
            shutdown_grace_period_s=max(1, round(shutdown_grace_s)),
            # a handed-back run stores its trace and lease within this (shielded; see hand_back)
            cancellation_hard_deadline_s=3 * LAST_SAVE_S + 1,
            # SAQ's sweep frees the job of a worker killed between taking it and marking it active
            # (it blocks the run's job key until then): as often as a lease, not SAQ's minute
            timers=PartialTimersDict(schedule=1, worker_info=10, abort=1, sweep=max(1, round(lease_s))),
            startup=[self._startup],
            shutdown=[self._shutdown],
        )

    async def run(self) -> None:
        """Work until SIGTERM or SIGINT, then drain (see the class)."""
        await self.worker.start()

    async def execute_run(
        self, ctx: Context, *, run_id: str, run_attempt: int | None = None, run_status: str | None = None
    ) -> str:
        """The job: execute (start or resume) the run; its outcome is stored by the loop.

        First a claim at the attempt the job was enqueued for (no read before it: the pickup is one
        statement); a run that moved on since is read and taken as it now stands.
        """
        try:
            ended = None
            if run_attempt is not None and run_status is not None:
                ended = await self._loop.run_if_claimed(RunId(run_id), attempt=run_attempt, was=RunStatus(run_status))
            if ended is None:
                run = await self._runs.get(RunId(run_id))
                if run is None or run.is_terminal:
                    return "nothing to do"
                ended = await self._loop.run(run)
        except StaleAttempt:
            return "taken by another executor"
        if self._tree is not None and (ended.parent_run_id is not None or ended.status is RunStatus.WAITING):
            await self._tree.settle(ended, self._scheduler)  # start its children, or answer its parent
        await self._events.publish_ended(ended)
        return ended.status.value

    async def _startup(self, ctx: Context) -> None:
        await self._scheduler.start()
        logger.info("worker_started", concurrency=self.worker.concurrency, queue=self.worker.queue.name)

    async def _shutdown(self, ctx: Context) -> None:
        await self._scheduler.shutdown(0)
        logger.info("worker_stopped")
