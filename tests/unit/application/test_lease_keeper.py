"""The lease keeper renews every held run's lease, and after a failed renewal tries again soon."""

import asyncio
from datetime import timedelta

from agentkit.adapters.memory import FixedClock
from agentkit.application.agent.lease import LeaseKeeper
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
