"""The RunRepository port: durable runs."""

from abc import abstractmethod
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from agentkit.domain.actions import RequiredAction
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run

LapsedCursor = tuple[datetime, RunId]
"""Where a page of lapsed runs ended: the last run's lease expiry and id."""


def cursor_of(run: Run) -> LapsedCursor:
    """The keyset position of a lapsed run (its lease's expiry, then its id)."""
    assert run.expires_at is not None  # noqa: S101 - lapsed runs have a lease
    return (run.expires_at, run.id)


class RunRepository(Protocol):
    """Stores runs; each write of a run is atomic."""

    @abstractmethod
    async def add(self, run: Run) -> None:
        """Store a new run.

        Raises:
            IdempotencyConflict: another run of the same owner holds the same idempotency key.
        """

    @abstractmethod
    async def get(self, run_id: RunId) -> Run | None:
        """The run with this id, or None."""

    @abstractmethod
    async def get_by_idempotency_key(self, owner: OwnerId, key: str) -> Run | None:
        """The owner's run that was created with this idempotency key, or None."""

    @abstractmethod
    async def save(self, run: Run) -> None:
        """Replace a stored run with this version.

        Fencing: when the stored run has a higher `attempt`, or has already reached a terminal status
        that this version does not share (say the sweeper expired it), the write is refused with
        StaleAttempt, so an executor that lost its lease cannot overwrite what came after it.
        """

    @abstractmethod
    async def claim(self, run_id: RunId, *, attempt: int, now: datetime, until: datetime) -> Run | None:
        """Take the run for a new executor, if it is still unfinished under `attempt`; return it as taken.

        One atomic compare-and-set: a pending run starts, a running one whose lease lapsed (its
        executor died, or handed it back) resumes; either way under `attempt + 1`, with a lease until
        `until`. Two executors racing for the same run cannot both win: the loser gets None, as does a
        claim of a run that ended, moved on, or whose executor still holds its lease.
        """

    @abstractmethod
    async def request_cancel(self, run_id: RunId) -> None:
        """Set the cancel flag of a running run without touching anything else."""

    @abstractmethod
    async def children(self, run_id: RunId) -> list[Run]:
        """The run's child runs (the runs its calls of other agents started), oldest first."""

    @abstractmethod
    async def lapsed(self, now: datetime, *, limit: int = 100, after: LapsedCursor | None = None) -> list[Run]:
        """Pending or running runs whose lease expired before `now`, longest-lapsed first.

        Keyset paging: `after` (the `cursor_of` the last run of the previous page) starts past it, so a
        pass over thousands of lapsed runs reads each once, whatever it did with the earlier pages.
        """

    @abstractmethod
    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        """Set the heartbeat and extend the lease of these runs, where they are still pending or running.

        Returns the renewed runs whose cancel was requested, so an executor learns of a cancel made
        in another process with the renewal it does anyway, instead of a read per step.
        """

    @abstractmethod
    async def expire_lapsed(self, now: datetime, *, reason: str, limit: int = 100, min_attempt: int = 0) -> list[Run]:
        """Atomically move pending or running runs whose lease lapsed before `now` to `expired`.

        Only runs whose executors were lost `min_attempt` times or more (`Run.lost_attempts`: attempts
        that ended in a pause do not count) are expired; the others may be resumed.
        A run whose lease was renewed meanwhile is not touched. Returns the expired runs.
        """

    @abstractmethod
    async def save_answer(self, run: Run, *, expected: RequiredAction) -> bool:
        """Store a paused run's answered action, and its status (back to running once all are answered).

        A compare-and-set: it writes only while the stored run is `requires_action` or `waiting` at the
        same attempt with exactly `expected` as its action, so of two answers given at once neither is
        lost (the second is told False, and reads the run again). Only status, action, expiry and the
        children's usage (a child run's end is an answer) are written.
        """

    @abstractmethod
    async def stalled_waits(self, now: datetime, *, limit: int = 100) -> list[Run]:
        """`waiting` runs whose expiry (when to look at their children again) passed before `now`, oldest first."""

    @abstractmethod
    async def expire_unanswered(self, now: datetime, *, reason: str, limit: int = 100) -> list[Run]:
        """Atomically end `expired` the `requires_action` runs whose deadline passed before `now`; return them."""

    @abstractmethod
    async def delete_finished_before(self, cutoff: datetime) -> int:
        """Delete terminal runs (and their steps) that finished before `cutoff`; return how many."""
