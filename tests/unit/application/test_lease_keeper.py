"""The lease keeper renews every held run's lease (sooner when renewals land late), and knows which it surely holds."""

import asyncio
from datetime import timedelta

import pytest

from agentkit.adapters.memory import FixedClock
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.errors import StaleAttempt
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, start
from tests.unit.application.store_doubles import OutageRunRepository, eventually


async def test_a_failed_renewal_is_retried_within_a_second_not_an_interval_later() -> None:
    clock = FixedClock()
    repo = OutageRunRepository()
    run = start(
        Run(id=RunId("run-1"), owner=OwnerId("o"), goal="g", created_at=clock.now()),
        now=clock.now(),
        lease_until=clock.now() + timedelta(seconds=30),
    )
    await repo.add(run)
    repo.failing_renewals = 3
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(0)

    keeper = LeaseKeeper(runs=repo, clock=clock, lease_s=30, sleep=sleep)
    keeper.hold(run.id)
    await eventually(lambda: repo.renewals >= 5)  # three failures, then two renewals
    keeper.release(run.id)

    assert waits[0] == 10.0  # a third of the lease
    assert all(wait <= 1.0 for wait in waits[1:4])  # the three retries after a failure
    assert waits[4] == 10.0  # renewed: back to the interval
    stored = await repo.get(run.id)
    assert stored is not None
    assert stored.expires_at == clock.now() + timedelta(seconds=30)


class PacedSleep:
    """A sleep that lasts what the test says (the clock moves that much), remembering what was asked."""

    def __init__(self, clock: FixedClock) -> None:
        self.clock = clock
        self.waits: list[float] = []
        self._lasts: asyncio.Queue[float] = asyncio.Queue()

    async def __call__(self, seconds: float) -> None:
        """Wait for the test to say how long this sleep took."""
        self.waits.append(seconds)
        self.clock.advance(await self._lasts.get())

    async def lasts(self, seconds: float, repo: OutageRunRepository) -> None:
        """Let the sleeping keeper wake `seconds` later, and wait until it renewed."""
        renewals = repo.renewals
        self._lasts.put_nowait(seconds)
        await eventually(lambda: repo.renewals > renewals)


async def claimed_run(repo: OutageRunRepository, clock: FixedClock) -> Run:
    run = start(
        Run(id=RunId("run-1"), owner=OwnerId("o"), goal="g", created_at=clock.now()),
        now=clock.now(),
        lease_until=clock.now() + timedelta(seconds=30),
    )
    await repo.add(run)
    return run


async def test_a_renewal_that_lands_after_the_lease_lapsed_proves_nothing_until_the_executor_confirms() -> None:
    clock, repo = FixedClock(), OutageRunRepository()
    run = await claimed_run(repo, clock)
    sleep = PacedSleep(clock)
    keeper = LeaseKeeper(runs=repo, clock=clock, lease_s=30, sleep=sleep)
    keeper.hold(run.id)
    assert keeper.fresh(run)  # just claimed: 30 s of lease left

    await sleep.lasts(10, repo)  # on time
    await sleep.lasts(12, repo)  # 2 s late: 22 s in, renewed until 52
    # past what the claim alone would allow (30 s, less a third for the margin): the renewals count
    assert keeper.fresh(run)

    await sleep.lasts(40, repo)  # the loop stalled 40 s: the lease lapsed at 52, the renewal came at 62
    # it went by the run, so it may have renewed another attempt's lease: it says nothing of this one's
    assert not keeper.fresh(run)

    await keeper.confirm(run)  # a renewal and a read: the run is still this attempt's
    assert keeper.fresh(run)

    # another process's sweeper takes the run once its lease lapsed
    later = clock.now() + timedelta(seconds=31)
    assert await repo.claim(run.id, attempt=1, now=later, until=later + timedelta(seconds=30)) is not None
    with pytest.raises(StaleAttempt, match="attempt 1 lost its lease"):
        await keeper.confirm(run)
    assert not keeper.fresh(run)
    keeper.release(run.id)


async def test_renewals_that_land_late_bring_the_next_one_sooner() -> None:
    clock, repo = FixedClock(), OutageRunRepository()
    run = await claimed_run(repo, clock)
    sleep = PacedSleep(clock)
    keeper = LeaseKeeper(runs=repo, clock=clock, lease_s=30, sleep=sleep)
    keeper.hold(run.id)

    await sleep.lasts(10, repo)  # due at 10, on time
    await sleep.lasts(14, repo)  # due at 20, woke at 24
    await sleep.lasts(10, repo)
    keeper.release(run.id)

    # a third of the lease; then the same; then, 4 s late, due 4 s sooner: 6 s after the late one was sent
    assert sleep.waits[:3] == [10.0, 10.0, 6.0]


async def test_a_run_two_executions_hold_in_one_process_stays_renewed_until_both_released_it() -> None:
    # a stalled executor and the one that resumed its run (this process's own sweeper found it lapsed)
    clock, repo = FixedClock(), OutageRunRepository()
    run = await claimed_run(repo, clock)
    sleep = PacedSleep(clock)
    keeper = LeaseKeeper(runs=repo, clock=clock, lease_s=30, sleep=sleep)
    keeper.hold(run.id)
    keeper.hold(run.id)

    keeper.release(run.id)  # the stalled one found it lost the run
    await sleep.lasts(10, repo)

    stored = await repo.get(run.id)
    assert stored is not None
    assert stored.expires_at == clock.now() + timedelta(seconds=30)  # renewed for the one still going
    keeper.release(run.id)
