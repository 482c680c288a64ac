"""The RunRepository port: durable runs."""

from abc import abstractmethod
from datetime import datetime
from typing import Protocol

from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run


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

        Fencing: when the stored run has a higher `attempt`, the write is refused with StaleAttempt,
        so an executor that lost its lease cannot overwrite the newer one.
        """

    @abstractmethod
    async def request_cancel(self, run_id: RunId) -> None:
        """Set the cancel flag of a running run without touching anything else."""

    @abstractmethod
    async def lapsed(self, now: datetime, *, limit: int = 100) -> list[Run]:
        """Pending or running runs whose lease expired before `now`."""

    @abstractmethod
    async def delete_finished_before(self, cutoff: datetime) -> int:
        """Delete terminal runs (and their steps) that finished before `cutoff`; return how many."""
