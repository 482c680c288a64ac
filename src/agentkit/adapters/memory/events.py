"""In-memory RunEvents: for a service whose state lives in one process."""

from agentkit.adapters.waiters import LocalDelivery
from agentkit.application.ports.run_events import RunEvents
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run


class InMemoryRunEvents(LocalDelivery, RunEvents):
    """Delivers every event at once to this process's waiters and cancel handlers."""

    async def start(self) -> None:
        """Nothing to subscribe to."""

    async def aclose(self) -> None:
        """Nothing to close."""

    async def publish_ended(self, run: Run) -> None:
        """Wake the run's waiters, handing them the run."""
        self._waiters.ended(run.id, run)

    async def publish_cancel(self, run_id: RunId) -> None:
        """Tell the cancel handlers."""
        self._waiters.cancelled(run_id)

    async def publish_followed(self, run_id: RunId) -> None:
        """Tell the handlers (this process executes every run)."""
        self._waiters.followed(run_id)
