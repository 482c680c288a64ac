"""CancelRun: stop a pending or running run."""

from agentkit.application.errors import RunConflict, StaleAttempt
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.domain import run as runs
from agentkit.domain.errors import IllegalTransition
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus


class CancelRun:
    """Cancel a run of this owner.

    Rules:
    - A pending run is cancelled at once; a running run gets a cancel request and ends
      `cancelled` at its next step boundary; a cancelled run stays as it is.
    - A run that already ended otherwise cannot be cancelled (RunConflict).
    - The request is stored first, then the scheduler is told (an event every process hears), so
      the run stops at its next step wherever it executes; should the event be lost, its executor
      finds the stored request with its next lease renewal.
    """

    def __init__(self, *, runs: RunRepository, clock: Clock, scheduler: RunScheduler) -> None:
        self._runs = runs
        self._clock = clock
        self._scheduler = scheduler

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> Run:
        """Cancel, or ask the run to cancel; return the run as it now stands."""
        for _ in range(2):
            run = await load_owned(self._runs, run_id, owner)
            try:
                cancelled = runs.request_cancel(run, now=self._clock.now())
            except IllegalTransition:
                raise RunConflict(f"run {run_id} already ended with status {run.status.value!r}") from None
            if cancelled is run:
                return run
            if run.status is RunStatus.RUNNING:
                await self._runs.request_cancel(run_id)
                await self._scheduler.notify_cancel(run_id)
                return cancelled
            try:
                await self._runs.save(cancelled)
            except StaleAttempt:
                continue  # an executor started it meanwhile: it is running now, so ask it to stop
            return cancelled
        raise RunConflict(f"run {run_id} changed while it was being cancelled; try again")
