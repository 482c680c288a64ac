"""Leases: an executor renews the lease of every run it holds, so the sweeper leaves them alone."""

import asyncio
from datetime import timedelta

import structlog

from agentkit.application.backoff import Backoff, Sleep
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.domain.ids import RunId

logger = structlog.get_logger(__name__)


class LeaseKeeper:
    """Renews the leases of the runs it holds, all in one write, every third of the lease.

    One background task serves every run of a process (a task per run would cost each run in
    flight a task of its own); it stops when the last run is released. A run whose process dies
    stops being renewed, its lease lapses and the sweeper marks it `expired`.

    It also knows which held runs are to cancel: a cancel made in this process is marked at once
    (`mark_cancelled`), one made in another process arrives with the next renewal.

    A renewal that fails (the store is down) is tried again soon, with a backoff capped well below the
    interval, rather than a whole interval later: once the store is back, the leases are renewed
    within a second or two, before the sweeper's next look at them. A run keeps being held, and
    renewed, for as long as its executor retries its writes, so finished work waiting for the store
    is not taken for a dead worker's.
    """

    def __init__(self, *, runs: RunRepository, clock: Clock, lease_s: float, sleep: Sleep = asyncio.sleep) -> None:
        self._runs = runs
        self._clock = clock
        self._sleep = sleep
        self._lease = timedelta(seconds=lease_s)
        self._interval_s = lease_s / 3
        self._retry = Backoff(first_s=min(0.25, self._interval_s / 4), cap_s=min(1.0, self._interval_s / 2))
        self._held: set[RunId] = set()
        self._cancelled: set[RunId] = set()
        self._task: asyncio.Task[None] | None = None

    def hold(self, run_id: RunId) -> None:
        """Keep renewing this run's lease until it is released."""
        self._held.add(run_id)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._renew(), name="agentkit-lease-keeper")

    def release(self, run_id: RunId) -> None:
        """Stop renewing this run's lease."""
        self._held.discard(run_id)
        self._cancelled.discard(run_id)

    def mark_cancelled(self, run_id: RunId) -> None:
        """Remember that a held run is to cancel at its next step boundary."""
        if run_id in self._held:
            self._cancelled.add(run_id)

    def is_cancelled(self, run_id: RunId) -> bool:
        """Whether the run is to cancel."""
        return run_id in self._cancelled

    async def _renew(self) -> None:
        failures = 0
        while self._held:
            # after a failure, retry soon (the bound grows from a quarter second to one second)
            await self._sleep(self._retry.delay(failures) if failures else self._interval_s)
            if not self._held:
                break
            now = self._clock.now()
            try:
                cancelled = await self._runs.renew_leases(sorted(self._held), now=now, until=now + self._lease)
            except Exception as exc:
                failures += 1
                if failures & (failures - 1) == 0:  # the 1st, 2nd, 4th... failure in a row
                    logger.warning("lease_renewal_failed", runs=len(self._held), failures=failures, error=str(exc))
                continue
            if failures:
                logger.info("lease_renewal_recovered", runs=len(self._held), failures=failures)
            failures = 0
            self._cancelled.update(cancelled & self._held)
