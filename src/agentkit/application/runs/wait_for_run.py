"""WaitForRun: long-poll a run until it ends or the wait is over."""

import asyncio

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run


class WaitForRun:
    """Read a run of this owner, waiting up to `wait_s` for it to reach a terminal status.

    Rules:
    - A run executing in this process is awaited directly (it answers the moment it ends).
    - A run executing elsewhere is polled every `poll_s` seconds.
    - Another owner's run is not found.
    - Once the process begins to shut down, the wait ends at once with the run as it stands.
    """

    def __init__(self, *, runs: RunRepository, scheduler: RunScheduler, clock: Clock, poll_s: float = 0.25) -> None:
        self._runs = runs
        self._scheduler = scheduler
        self._clock = clock
        self._poll_s = poll_s

    async def execute(self, run_id: RunId, owner: OwnerId | None, *, wait_s: float) -> Run:
        """The run once it ended, or as it stands when the wait is over."""
        run = await self._get(run_id, owner)
        deadline = self._clock.monotonic() + wait_s
        while not run.is_terminal and self._scheduler.accepting:
            remaining = deadline - self._clock.monotonic()
            if remaining <= 0:
                break
            waited = await self._scheduler.wait(run_id, remaining)
            if waited.run is not None:
                return waited.run
            run = await self._get(run_id, owner)
            if not waited.here and not run.is_terminal:
                # it executes in another process: poll the repository
                await asyncio.sleep(min(self._poll_s, max(deadline - self._clock.monotonic(), 0)))
                run = await self._get(run_id, owner)
        return run

    async def _get(self, run_id: RunId, owner: OwnerId | None) -> Run:
        return await load_owned(self._runs, run_id, owner)
