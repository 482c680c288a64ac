"""RunJobs: the SAQ queue of runs to execute, one job per run and attempt."""

import uuid

import structlog
from redis.exceptions import RedisError
from saq import Job, Status
from saq.queue.redis import RedisQueue

from agentkit.application.errors import StoreUnavailable
from agentkit.domain.run import Run

logger = structlog.get_logger(__name__)

EXECUTE_RUN = "agentkit.execute_run"
"""The name workers register the job function under."""


class RunJobs:
    """Enqueues runs for workers; the job's key is the run and its attempt, so a run is queued once per attempt.

    SAQ's own retries are off (`retries=1`: one try): a run that must go on after its worker died is
    enqueued again by the lease sweeper under its new attempt, and resumes from its stored steps.
    SAQ's timeout is a backstop well past the run's own limits, so that the job of a worker that was
    killed is swept from Redis eventually; the run itself never depends on it.

    Args:
        queue: The SAQ queue (its Redis, its name).
        job_timeout_s: SAQ's backstop timeout for a job.
    """

    def __init__(self, queue: RedisQueue, *, job_timeout_s: int) -> None:
        self.queue = queue
        self._job_timeout_s = job_timeout_s

    async def connect(self) -> None:
        """Bind the queue to the running event loop."""
        await self.queue.connect()

    async def enqueue(self, run: Run) -> None:
        """Queue the run for a worker (a no-op if this attempt is already queued).

        Raises:
            StoreUnavailable: Redis could not take it.
        """
        key = f"{run.id}:{run.attempt}"
        try:
            if await self._enqueue(key, run) is not None:
                return
            existing = await self.queue.job(key)
            if existing is not None and not await self._waiting(existing):
                # taken off the queue by a worker that died before it claimed the run (the run is
                # lapsed yet still at this attempt): SAQ frees such a job only once its sweep gets to
                # it (seconds each, one at a time), so the run gets a job of its own; should both
                # ever run, the claim lets one of them
                await self._enqueue(f"{key}:{uuid.uuid4().hex}", run)
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"the run queue (Redis) is unavailable ({type(exc).__name__})") from exc

    async def _waiting(self, job: Job) -> bool:
        """Whether the job still waits in the queue's list (not taken by a worker)."""
        if job.status is not Status.QUEUED:
            return False
        return await self.queue.redis.lpos(self.queue.namespace("queued"), job.id) is not None

    async def _enqueue(self, key: str, run: Run) -> object:
        return await self.queue.enqueue(
            EXECUTE_RUN,
            key=key,
            run_id=run.id,
            # (not `status`/`attempts`: those are SAQ's own Job fields)
            run_attempt=run.attempt,
            run_status=run.status.value,
            timeout=self._job_timeout_s,
            retries=1,
            ttl=600,
        )
