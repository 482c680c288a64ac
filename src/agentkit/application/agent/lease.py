"""Leases: an executor renews the lease of every run it holds, so the sweeper leaves them alone."""

import asyncio
import math
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta

import structlog

from agentkit.application.backoff import Backoff, Sleep
from agentkit.application.errors import StaleAttempt
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run, RunStatus

logger = structlog.get_logger(__name__)

_UNSURE = -math.inf


class LeaseKeeper:
    """Renews the leases of the runs it holds, all in one write, every third of the lease or sooner.

    One background task serves every run of a process (a task per run would cost each run in
    flight a task of its own); it stops an interval after the last run was released. A run whose process dies
    stops being renewed, its lease lapses and the sweeper marks it `expired`.

    It also knows which held runs are to cancel: a cancel made in this process is marked at once
    (`mark_cancelled`), one made in another process arrives with the next renewal. A run whose tool
    calls run at once is told the moment its cancel arrives (`on_cancel`), so it stops them all.

    A renewal that fails (the store is down) is tried again soon, with a backoff capped well below the
    interval, rather than a whole interval later: once the store is back, the leases are renewed
    within a second or two, before the sweeper's next look at them. A run keeps being held, and
    renewed, for as long as its executor retries its writes, so finished work waiting for the store
    is not taken for a dead worker's.

    A slow event loop makes renewals late. The next one is due an interval after the last was sent,
    sooner by how late renewals have been landing lately (down to a quarter interval), so a loop that
    lags keeps its leases. One that stalls past a lease cannot: the sweeper of another process may
    then resume the run under a new attempt while this executor still runs. So the keeper also knows,
    per attempt, until when its lease is certainly held: the `until` of the last write that renewed it
    and landed while it was still held, in monotonic time. `fresh` says whether that leaves a margin
    (no I/O); if not, `confirm` renews and reads the run back before the executor asks the model again.
    """

    def __init__(self, *, runs: RunRepository, clock: Clock, lease_s: float, sleep: Sleep = asyncio.sleep) -> None:
        self._runs = runs
        self._clock = clock
        self._sleep = sleep
        self._lease_s = lease_s
        self._lease = timedelta(seconds=lease_s)
        self._interval_s = lease_s / 3
        # a model call starts only with a renewal's worth of lease certainly left: time for the keeper
        # to renew while the call runs
        self._margin_s = lease_s / 3
        self._retry = Backoff(first_s=min(0.25, self._interval_s / 4), cap_s=min(1.0, self._interval_s / 2))
        # executions holding each run here: a stalled one and its successor may overlap in one process
        self._held: dict[RunId, int] = {}
        self._cancelled: set[RunId] = set()
        # what to call when a held run's cancel arrives (a run whose batch of tool calls is running)
        self._stops: dict[RunId, Callable[[], None]] = {}
        # (run, attempt) -> monotonic time until which that attempt certainly holds the lease
        self._sure: dict[tuple[RunId, int], float] = {}
        self._late_s = 0.0  # how late renewals landed lately (decaying): renewals come that much sooner
        self._task: asyncio.Task[None] | None = None

    @property
    def lease(self) -> timedelta:
        """How long a lease lasts (RUN_LEASE_S)."""
        return self._lease

    def hold(self, run_id: RunId) -> None:
        """Keep renewing this run's lease until it is released."""
        self._held[run_id] = self._held.get(run_id, 0) + 1
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._renew(), name="agentkit-lease-keeper")

    def release(self, run_id: RunId) -> None:
        """Stop renewing this run's lease (once every execution holding it here released it)."""
        left = self._held.get(run_id, 0) - 1
        if left > 0:
            self._held[run_id] = left
            return
        self._held.pop(run_id, None)
        self._cancelled.discard(run_id)
        self._stops.pop(run_id, None)
        for key in [key for key in self._sure if key[0] == run_id]:
            del self._sure[key]

    def mark_cancelled(self, run_id: RunId) -> None:
        """Remember that a held run is to cancel at its next step boundary (or at once, see `on_cancel`)."""
        if run_id in self._held:
            self._cancel([run_id])

    def on_cancel(self, run_id: RunId, stop: Callable[[], None] | None) -> None:
        """Call `stop` as soon as the run's cancel arrives, until it is set to None (one per run)."""
        if stop is None:
            self._stops.pop(run_id, None)
        else:
            self._stops[run_id] = stop

    def _cancel(self, run_ids: Iterable[RunId]) -> None:
        for run_id in run_ids:
            if run_id in self._cancelled:
                continue
            self._cancelled.add(run_id)
            stop = self._stops.pop(run_id, None)
            if stop is not None:
                stop()

    def is_cancelled(self, run_id: RunId) -> bool:
        """Whether the run is to cancel."""
        return run_id in self._cancelled

    def fresh(self, run: Run) -> bool:
        """Whether this attempt certainly holds the run's lease for a margin yet (no I/O: a comparison of times).

        Before the keeper saw any renewal of the attempt, its lease is the one its claim stored
        (`run.expires_at`, by this process's wall clock, converted once to monotonic time).
        """
        key = (run.id, run.attempt)
        sure = self._sure.get(key)
        now = self._clock.monotonic()
        if sure is None:
            left = None if run.expires_at is None else run.expires_at - self._clock.now()
            sure = _UNSURE if left is None else now + left.total_seconds()
            if run.id in self._held:
                self._sure[key] = sure
        return now < sure - self._margin_s

    async def confirm(self, run: Run) -> None:
        """Renew the run's lease, then read it back: this attempt holds it for a whole lease from now.

        The renewal first: once it has landed nobody can claim the run for a lease, so a read after it
        that still shows this attempt running proves the attempt holds it (a claim before the renewal
        shows in the read).

        Raises:
            StaleAttempt: another attempt took the run, or it ended (the sweeper expired it, say).
            StoreUnavailable: the store did not answer.
        """
        sent = self._clock.monotonic()
        now = self._clock.now()
        cancelled = await self._runs.renew_leases([run.id], now=now, until=now + self._lease)
        stored = await self._runs.get(run.id)
        key = (run.id, run.attempt)
        if stored is None or stored.attempt != run.attempt or stored.status is not RunStatus.RUNNING:
            if key in self._sure:
                self._sure[key] = _UNSURE
            where = "gone" if stored is None else f"{stored.status.value} under attempt {stored.attempt}"
            raise StaleAttempt(f"run {run.id} is {where}; attempt {run.attempt} lost its lease")
        if run.id in self._held:
            self._sure[key] = max(self._sure.get(key, _UNSURE), sent + self._lease_s)
            self._cancel(run_id for run_id in cancelled if run_id in self._held)

    def stored(self, run: Run, *, since: float) -> None:
        """A fenced write of this attempt (refused had another attempt owned the run) stored a fresh lease.

        Args:
            run: The run as written.
            since: `clock.monotonic()` taken before the `now` its lease was counted from.
        """
        if run.id in self._held:
            key = (run.id, run.attempt)
            self._sure[key] = max(self._sure.get(key, _UNSURE), since + self._lease_s)

    async def _renew(self) -> None:
        failures = 0
        due = self._clock.monotonic() + self._interval_s
        while True:
            # after a failure, retry soon (the bound grows from a quarter second to one second)
            await self._sleep(self._retry.delay(failures) if failures else max(0.0, due - self._clock.monotonic()))
            if not self._held:
                # nothing held for a whole interval: stop. Not sooner: runs that start and end between
                # two turns of the event loop (a model that answers at once) would each start a task
                break
            held = sorted(self._held)
            sent = self._clock.monotonic()
            now = self._clock.now()
            try:
                cancelled = await self._runs.renew_leases(held, now=now, until=now + self._lease)
            except Exception as exc:
                failures += 1
                if failures & (failures - 1) == 0:  # the 1st, 2nd, 4th... failure in a row
                    logger.warning("lease_renewal_failed", runs=len(held), failures=failures, error=str(exc))
                continue
            landed = self._clock.monotonic()
            if failures:
                logger.info("lease_renewal_recovered", runs=len(held), failures=failures)
            failures = 0
            self._cancel(run_id for run_id in cancelled if run_id in self._held)
            self._renewed(held, sent=sent, landed=landed)
            # the next one an interval after this one was sent, sooner by how late renewals land
            self._late_s = max(landed - due, self._late_s / 2, 0.0)
            due = sent + max(self._interval_s - self._late_s, self._interval_s / 4)

    def _renewed(self, run_ids: Sequence[RunId], *, sent: float, landed: float) -> None:
        """What a renewal sent at `sent` that landed by `landed` says about each attempt's hold.

        Renewals go by run, not by attempt: one that lands after an attempt's lease may have lapsed
        could have renewed a newer attempt's lease. It proves nothing for that attempt, which must
        confirm before its next model call. One that landed in time extends the hold.
        """
        renewed = set(run_ids)
        until = sent + self._lease_s
        for key, sure in self._sure.items():
            if key[0] in renewed:
                self._sure[key] = max(sure, until) if landed < sure else _UNSURE
