"""ObservedRunRepository: a RunRepository that hands every run it stored to the step pipeline's run observers."""

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.ports.run_repository import LapsedCursor, RunRepository
from agentkit.domain.actions import RequiredAction
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run

# Runs whose last observed state this process remembers; past it the oldest are forgotten.
_REMEMBERED: Final = 10_000


class ObservedRunRepository(RunRepository):
    """Delegates to the real repository; after each write that stored a run, the run observers hear of it.

    Every status change of a run is a write of the repository, whoever makes it (the loop, a cancel,
    the sweeper's expiry), so observing writes sees them all, and the loop itself needs no hook. A
    write that failed is not observed: what was not stored did not happen.

    The run goes to the observers through the step pipeline (in order with the run's steps, off the
    writer's path), and only when what they watch changed: its status, its attempt (another executor
    resumed it), its cancel request or its pauses. The loop's other writes (the call in progress,
    tokens so far) cost no delivery.
    """

    def __init__(self, inner: RunRepository, pipeline: StepPipeline) -> None:
        self.inner = inner
        self._pipeline = pipeline
        self._seen: dict[RunId, tuple[str, int, bool, int]] = {}

    def _observe(self, run: Run) -> None:
        mark = (run.status.value, run.attempt, run.cancel_requested, run.pauses)
        seen = self._seen
        if seen.get(run.id) == mark:
            return
        seen[run.id] = mark  # an ended run too: one saved again unchanged is not observed twice
        if len(seen) > _REMEMBERED:
            del seen[next(iter(seen))]
        self._pipeline.put_run(run)

    async def add(self, run: Run) -> None:
        """Store a new run; observed."""
        await self.inner.add(run)
        self._observe(run)

    async def get(self, run_id: RunId) -> Run | None:
        """Read through."""
        return await self.inner.get(run_id)

    async def get_by_idempotency_key(self, owner: OwnerId, key: str) -> Run | None:
        """Read through."""
        return await self.inner.get_by_idempotency_key(owner, key)

    async def save(self, run: Run) -> None:
        """Store this version; observed."""
        await self.inner.save(run)
        self._observe(run)

    async def request_cancel(self, run_id: RunId) -> None:
        """Write through (a flag, no status change)."""
        await self.inner.request_cancel(run_id)

    async def claim(self, run_id: RunId, *, attempt: int, now: datetime, until: datetime) -> Run | None:
        """Take the run for an executor; observed when taken (it moved to running, or resumed)."""
        taken = await self.inner.claim(run_id, attempt=attempt, now=now, until=until)
        if taken is not None:
            self._observe(taken)
        return taken

    async def children(self, run_id: RunId) -> list[Run]:
        """Read through."""
        return await self.inner.children(run_id)

    async def stalled_waits(self, now: datetime, *, limit: int = 100) -> list[Run]:
        """Read through."""
        return await self.inner.stalled_waits(now, limit=limit)

    async def lapsed(self, now: datetime, *, limit: int = 100, after: LapsedCursor | None = None) -> list[Run]:
        """Read through."""
        return await self.inner.lapsed(now, limit=limit, after=after)

    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        """Write through (heartbeats, no status change)."""
        return await self.inner.renew_leases(run_ids, now=now, until=until)

    async def expire_lapsed(self, now: datetime, *, reason: str, limit: int = 100, min_attempt: int = 0) -> list[Run]:
        """Expire lapsed runs; each expired run observed."""
        expired = await self.inner.expire_lapsed(now, reason=reason, limit=limit, min_attempt=min_attempt)
        for run in expired:
            self._observe(run)
        return expired

    async def save_answer(self, run: Run, *, expected: RequiredAction) -> bool:
        """Store an answer; observed when stored."""
        stored = await self.inner.save_answer(run, expected=expected)
        if stored:
            self._observe(run)
        return stored

    async def expire_unanswered(self, now: datetime, *, reason: str, limit: int = 100) -> list[Run]:
        """Expire unanswered paused runs; each observed."""
        expired = await self.inner.expire_unanswered(now, reason=reason, limit=limit)
        for run in expired:
            self._observe(run)
        return expired

    async def delete_finished_before(self, cutoff: datetime) -> int:
        """Write through."""
        return await self.inner.delete_finished_before(cutoff)
