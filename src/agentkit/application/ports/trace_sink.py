"""The TraceSink and TraceReader ports: the step-by-step record of every run."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.steps import Step


class TraceSink(Protocol):
    """Records steps. A sink that fails must not fail the run: the loop logs and goes on."""

    @abstractmethod
    async def record(self, step: Step) -> None:
        """Record one step (a sink may queue it and write it a moment later)."""

    @abstractmethod
    async def flush(self) -> None:
        """Return once every step recorded so far is written (or given up on). Never raises.

        A sink that writes at once has nothing to wait for and returns.
        """


class TraceReader(Protocol):
    """Reads a run's steps back."""

    @abstractmethod
    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps ordered by step number."""
