"""ListRunWebhooks: a run's webhook deliveries and their attempts, for the run's owner."""

from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.application.runs.access import load_owned
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.webhooks import WebhookDelivery


class ListRunWebhooks:
    """Read a run's deliveries, oldest first. Another owner's run is reported as not found."""

    def __init__(self, *, runs: RunRepository, outbox: WebhookOutbox) -> None:
        self._runs = runs
        self._outbox = outbox

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> tuple[Run, list[WebhookDelivery]]:
        """The run and its deliveries.

        Raises:
            RunNotFound: no such run for this owner.
        """
        run = await load_owned(self._runs, run_id, owner)
        return run, await self._outbox.of_run(run_id)
