"""The TraceSink and TraceReader ports: the step-by-step record of every run."""

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.steps import Step


class TraceSink(Protocol):
    """Records steps.

    The durable sink is the step pipeline's first consumer: it must hold every step of a run before
    the run's final status is written, and a run whose steps it refused does not end `succeeded`.
    Step observers (a live printer) are sinks too; one that fails is logged and the run goes on.
    """

    local: ClassVar[bool] = False
    """Whether the sink keeps steps in this process only (memory): they die with the process as the
    pipeline's queue does, and readers here deliver the queue first, so a run need not wait for its
    steps to reach such a sink before a side effect."""

    @abstractmethod
    async def record(self, step: Step) -> None:
        """Record one step (a sink may queue it and write it a moment later)."""

    async def record_batch(self, steps: Sequence[Step]) -> None:
        """Record several steps, in order: a sink that can takes the step pipeline's batch in one call.

        One that raises is taken to have stored none of them. A sink that does not override this is
        handed the steps one by one (`record`), so that one refused step costs it no other.
        """
        for step in steps:
            await self.record(step)

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

    def backlog(self) -> int:
        """Steps recorded and not yet stored (0 for a sink that stores as it is given them).

        The step pipeline waits for a sink whose backlog passed its bound, so a store that lags or is
        down slows the runs down instead of holding their steps in memory without end.
        """
        return 0


class TraceReader(Protocol):
    """Reads a run's steps back."""

    @abstractmethod
    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps ordered by step number."""
