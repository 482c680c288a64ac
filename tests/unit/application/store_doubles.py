"""Test doubles of the state ports whose store goes down on cue (real adapters, not mocks)."""

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime

from agentkit.adapters.memory import FixedClock, InMemoryRunRepository, InMemoryTraceSink
from agentkit.application.errors import StoreUnavailable
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run, RunStatus

DOWN = "PostgreSQL is unavailable (ConnectionRefusedError)"


class OutageRunRepository(InMemoryRunRepository):
    """The in-memory repository, behind a store that refuses writes when told to.

    - `fail_next_saves(n, of=status)`: the next `n` saves of a run in `status` fail (claims count as
      saves of a running run).
    - `refuse_final`: while true, every save of a run in a terminal status fails.
    - `refuse_renewals`: while true (or for the next `failing_renewals` calls), renewals fail.

    Every attempt is counted, failed or not, so tests can see what the loop tried.
    """

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[RunStatus] = []  # the status of every save tried, in order
        self.refused = 0
        self.refuse_final = False
        self.refuse_renewals = False
        self.failing_renewals = 0
        self.renewals = 0
        self._failing_saves = 0
        self._failing_status: RunStatus | None = None

    def fail_next_saves(self, count: int, *, of: RunStatus) -> None:
        """Refuse the next `count` saves of runs in status `of`."""
        self._failing_saves, self._failing_status = count, of

    async def save(self, run: Run) -> None:
        """Save, unless the store is down for this write."""
        self.saves.append(run.status)
        if self.refuse_final and run.is_terminal:
            self.refused += 1
            raise StoreUnavailable(DOWN)
        if self._failing_saves and run.status is self._failing_status:
            self._failing_saves -= 1
            self.refused += 1
            raise StoreUnavailable(DOWN)
        await super().save(run)

    async def claim(self, run_id: RunId, *, attempt: int, now: datetime, until: datetime) -> Run | None:
        """Claim (a write of a running run, counted with the saves), unless the store is down for it."""
        self.saves.append(RunStatus.RUNNING)
        if self._failing_saves and self._failing_status is RunStatus.RUNNING:
            self._failing_saves -= 1
            self.refused += 1
            raise StoreUnavailable(DOWN)
        return await super().claim(run_id, attempt=attempt, now=now, until=until)

    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        """Renew, unless the store is down for renewals."""
        self.renewals += 1
        if self.refuse_renewals or self.failing_renewals:
            self.failing_renewals = max(self.failing_renewals - 1, 0)
            raise StoreUnavailable(DOWN)
        return await super().renew_leases(run_ids, now=now, until=until)

    def count(self, status: RunStatus) -> int:
        """How many saves of a run in `status` were tried."""
        return self.saves.count(status)


class ClockSleeper:
    """A sleep that moves a FixedClock instead of waiting, and remembers each wait."""

    def __init__(self, clock: FixedClock) -> None:
        self.clock = clock
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        """Advance the clock by `seconds` and let other tasks run."""
        self.waits.append(seconds)
        self.clock.advance(seconds)
        await asyncio.sleep(0)


class GatedTraceSink(InMemoryTraceSink):
    """Keeps steps in memory, but `flush` returns only once the test opens the gate (a slow trace store)."""

    def __init__(self) -> None:
        super().__init__()
        self.flushing = asyncio.Event()
        self.gate = asyncio.Event()

    async def flush(self) -> None:
        """Wait for the gate."""
        self.flushing.set()
        await self.gate.wait()

    def flushed(self) -> bool:
        """Never: a flush waits for the gate."""
        return False


class FlakyFlushTraceSink(InMemoryTraceSink):
    """Keeps steps in memory; its first `failures` flushes fail as a trace store that is down would."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.flushes = 0

    async def flush(self) -> None:
        """Fail the first `failures` times."""
        self.flushes += 1
        if self.flushes <= self.failures:
            raise StoreUnavailable(DOWN)

    def flushed(self) -> bool:
        """Never: the flush is what fails."""
        return False


async def eventually(condition: Callable[[], bool], *, timeout_s: float = 30.0, every_s: float = 0.005) -> None:
    """Let other tasks run until `condition()` holds (generous: the machine may be loaded).

    `every_s=0` looks again at every turn of the event loop: for a condition a task passes quickly on
    its way elsewhere (a retry loop on a fake clock runs hundreds of tries in 5 ms).
    """
    async with asyncio.timeout(timeout_s):
        while not condition():  # noqa: ASYNC110 - polls counters the doubles bump, with a generous timeout
            await asyncio.sleep(every_s)
