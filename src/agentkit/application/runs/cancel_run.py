"""CancelRun: stop a pending or running run."""

import contextlib

from agentkit.application.errors import RunConflict, StaleAttempt
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.application.runs.run_tree import RunTree
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
    - A run waiting on its child runs is cancelled at once, and so are they, and theirs (the cancel
      cascades down the tree). A child cancelled alone answers its parent's call with that end.
    """

    def __init__(
        self, *, runs: RunRepository, clock: Clock, scheduler: RunScheduler, tree: RunTree | None = None
    ) -> None:
        self._runs = runs
        self._clock = clock
        self._scheduler = scheduler
        self._tree = tree

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> Run:
        """Cancel, or ask the run to cancel; return the run as it now stands."""
        cancelled = await self._cancel(run_id, owner)
        if cancelled.status is RunStatus.CANCELLED:
            if cancelled.pauses:  # only a run that paused can have called other agents
                await self._cascade(cancelled)
            if self._tree is not None and cancelled.parent_run_id is not None:
                await self._tree.settle(cancelled, self._scheduler)
        return cancelled

    async def _cascade(self, run: Run) -> None:
        """Cancel the run's children that have not ended (and, through them, theirs)."""
        for child in await self._runs.children(run.id):
            if child.is_terminal:
                continue
            with contextlib.suppress(RunConflict):  # it ended meanwhile
                await self.execute(child.id, None)

    async def _cancel(self, run_id: RunId, owner: OwnerId | None) -> Run:
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
