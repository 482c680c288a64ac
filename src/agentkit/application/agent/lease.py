"""Leases: an executor renews the lease of every run it holds, so the sweeper leaves them alone."""

import asyncio
from datetime import timedelta

import structlog

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.domain.ids import RunId

logger = structlog.get_logger(__name__)


class LeaseKeeper:
    """Renews the leases of the runs it holds, all in one write, every third of the lease.

    One background task serves every run of a process (a task per run would cost each run in
    flight a task of its own); it stops when the last run is released. A run whose process dies
    stops being renewed, its lease lapses and the sweeper marks it `expired`.
    """

    def __init__(self, *, runs: RunRepository, clock: Clock, lease_s: float) -> None:
        self._runs = runs
        self._clock = clock
        self._lease = timedelta(seconds=lease_s)
        self._interval_s = lease_s / 3
        self._held: set[RunId] = set()
        self._task: asyncio.Task[None] | None = None

    def hold(self, run_id: RunId) -> None:
        """Keep renewing this run's lease until it is released."""
        self._held.add(run_id)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._renew(), name="agentkit-lease-keeper")

    def release(self, run_id: RunId) -> None:
        """Stop renewing this run's lease."""
        self._held.discard(run_id)

    async def _renew(self) -> None:
        while self._held:
            await asyncio.sleep(self._interval_s)
            if not self._held:
                break
            now = self._clock.now()
            try:
                await self._runs.renew_leases(sorted(self._held), now=now, until=now + self._lease)
            except Exception as exc:
                # the next tick tries again; a lease lapses only after three missed renewals
                logger.warning("lease_renewal_failed", runs=len(self._held), error=str(exc))
