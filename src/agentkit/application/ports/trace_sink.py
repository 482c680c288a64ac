"""The TraceSink and TraceReader ports: the step-by-step record of every run."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.steps import Step


class TraceSink(Protocol):
    """Records steps.

    The loop's durable sink must hold every step of a run before the run's final status is written:
    a run whose steps it refused does not end `succeeded`. Observers (a live printer) that fail are
    logged and the run goes on.
    """

    @abstractmethod
    async def record(self, step: Step) -> None:
        """Record one step (a sink may queue it and write it a moment later)."""

    @abstractmethod
    async def flush(self) -> None:
        """Return once every step recorded so far is stored (or given up on as unstorable).

        A sink that writes at once has nothing to wait for and returns. One whose store is down may
        wait for it (the caller bounds the wait) or raise (the caller retries).
        """

    def flushed(self) -> bool:
        """Whether `flush` would return at once (every recorded step stored): the caller then skips it.

        A cheap check, not a promise to keep: the default says no, and the caller flushes as usual.
        """
        return False


class TraceReader(Protocol):
    """Reads a run's steps back."""

    @abstractmethod
    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps ordered by step number."""
