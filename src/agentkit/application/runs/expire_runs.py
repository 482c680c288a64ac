"""ExpireLapsedRuns: end the runs whose executor stopped renewing its lease."""

import structlog

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository

logger = structlog.get_logger(__name__)

WORKER_LOST = "worker_lost"


class ExpireLapsedRuns:
    """Mark pending or running runs whose lease lapsed as `expired` (reason `worker_lost`).

    Rules:
    - Every accepted run reaches a terminal status, even when the process running it died.
    - A run whose lease a live executor renewed meanwhile is left alone (the repository's update is atomic).
    """

    def __init__(self, *, runs: RunRepository, clock: Clock) -> None:
        self._runs = runs
        self._clock = clock

    async def execute(self, *, batch: int = 100) -> int:
        """Expire up to `batch` lapsed runs; return how many were expired."""
        expired = await self._runs.expire_lapsed(self._clock.now(), reason=WORKER_LOST, limit=batch)
        for run in expired:
            logger.warning("run_expired", run_id=run.id, reason=WORKER_LOST)
        return len(expired)
