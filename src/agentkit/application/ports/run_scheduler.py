"""The RunScheduler port: who executes accepted runs, and how to wait for one to end."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class RunScheduler(Protocol):
    """Executes pending runs in the background (inline tasks, or workers behind a queue)."""

    @abstractmethod
    def submit(self, run: Run) -> None:
        """Start executing a stored pending run; returns at once."""

    @abstractmethod
    def notify_cancel(self, run_id: RunId) -> None:
        """A cancel was stored for this run: if it executes here, stop it at its next step boundary."""

    @abstractmethod
    async def wait(self, run_id: RunId, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the run to end here; True if it ended (or is not running here)."""

    @abstractmethod
    async def shutdown(self, grace_s: float) -> None:
        """Let running runs finish for up to `grace_s`, then interrupt the rest (they record why)."""
