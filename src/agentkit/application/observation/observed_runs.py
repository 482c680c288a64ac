"""ObservedRunRepository: a RunRepository that tells the run observers of every run it stored."""

from collections.abc import Sequence
from datetime import datetime

from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.run_repository import LapsedCursor, RunRepository
from agentkit.domain.actions import RequiredAction
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run


class ObservedRunRepository(RunRepository):
    """Delegates to the real repository; after each write that stored a run, the observer hears of it.

    Every status change of a run is a write of the repository, whoever makes it (the loop, a cancel,
    the sweeper's expiry), so observing writes sees them all, and the loop itself needs no hook. A
    write that failed is not observed: what was not stored did not happen.
    """

    def __init__(self, inner: RunRepository, observer: RunObserver) -> None:
        self.inner = inner
        self._observer = observer

    async def add(self, run: Run) -> None:
        """Store a new run; observed."""
        await self.inner.add(run)
        self._observer.on_run(run)

    async def get(self, run_id: RunId) -> Run | None:
        """Read through."""
        return await self.inner.get(run_id)

    async def get_by_idempotency_key(self, owner: OwnerId, key: str) -> Run | None:
        """Read through."""
        return await self.inner.get_by_idempotency_key(owner, key)

    async def save(self, run: Run) -> None:
        """Store this version; observed."""
        await self.inner.save(run)
        self._observer.on_run(run)

    async def request_cancel(self, run_id: RunId) -> None:
        """Write through (a flag, no status change)."""
        await self.inner.request_cancel(run_id)

    async def claim(self, run_id: RunId, *, attempt: int, now: datetime, until: datetime) -> Run | None:
        """Take the run for an executor; observed when taken (it moved to running, or resumed)."""
        taken = await self.inner.claim(run_id, attempt=attempt, now=now, until=until)
        if taken is not None:
            self._observer.on_run(taken)
        return taken

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
            self._observer.on_run(run)
        return expired

    async def save_answer(self, run: Run, *, expected: RequiredAction) -> bool:
        """Store an answer; observed when stored."""
        stored = await self.inner.save_answer(run, expected=expected)
        if stored:
            self._observer.on_run(run)
        return stored

    async def expire_unanswered(self, now: datetime, *, reason: str, limit: int = 100) -> list[Run]:
        """Expire unanswered paused runs; each observed."""
        expired = await self.inner.expire_unanswered(now, reason=reason, limit=limit)
        for run in expired:
            self._observer.on_run(run)
        return expired

    async def delete_finished_before(self, cutoff: datetime) -> int:
        """Write through."""
        return await self.inner.delete_finished_before(cutoff)
