"""An executor that may have lost its run's lease checks before it asks the model again; one that lost it stops.

And the sweeper takes a run over only once its lease lapsed by a margin.
"""

from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest

from agentkit.adapters.memory import FixedClock, InMemoryRunRepository
from agentkit.application.agent import AgentConfig
from agentkit.application.errors import StaleAttempt
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.recover_runs import RecoverLapsedRuns, RecoveryPass, lapse_grace_s
from agentkit.application.tools import tool
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run, RunStatus
from tests.unit.application.harness import OWNER, Harness, answer, call, calls

RUN_1 = RunId("run-1")
LEASE_S = 30.0


class CountingRunRepository(InMemoryRunRepository):
    """The in-memory repository, counting the reads and renewals made of it."""

    def __init__(self) -> None:
        super().__init__()
        self.gets = 0
        self.renewals = 0

    async def get(self, run_id: RunId) -> Run | None:
        """Read the run (counted)."""
        self.gets += 1
        return await super().get(run_id)

    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        """Renew (counted)."""
        self.renewals += 1
        return await super().renew_leases(run_ids, now=now, until=until)


async def test_an_executor_whose_loop_stalled_past_its_lease_while_another_took_the_run_asks_the_model_no_more() -> (
    None
):
    clock, runs = FixedClock(), CountingRunRepository()

    @tool(idempotent=True)
    async def lookup(q: str) -> str:
        """Look something up.

        Args:
            q: What.
        """
        # the event loop stalls past the lease (no renewal could run), and another process's sweeper
        # resumes the run under a new attempt meanwhile
        clock.advance(LEASE_S + 5)
        taken = await runs.claim(RUN_1, attempt=1, now=clock.now(), until=clock.now() + timedelta(seconds=LEASE_S))
        assert taken is not None
        return "found"

    h = Harness(
        [calls(call("lookup", q="x")), answer("done")],
        [lookup],
        runs=runs,
        clock=clock,
        config=AgentConfig(lease_s=LEASE_S),
    )

    with pytest.raises(StaleAttempt):
        await h.run("look it up")

    assert len(h.llm.requests) == 1  # the second turn is the new attempt's to ask for, not this one's
    stored = await runs.get(RUN_1)
    assert stored is not None
    assert (stored.status, stored.attempt) == (RunStatus.RUNNING, 2)  # left to the attempt that holds it


async def test_a_held_lease_costs_no_store_round_trip_until_it_may_have_lapsed() -> None:
    clock, runs = FixedClock(), CountingRunRepository()
    seen: list[tuple[int, int]] = []

    @tool(idempotent=True)
    async def step(i: int) -> str:
        """A step that takes a while.

        Args:
            i: Which.
        """
        clock.advance(LEASE_S / 5)  # three of them leave less than a third of the lease: the margin
        seen.append((runs.gets, runs.renewals))
        return "ok"

    script = [calls(call("step", call_id=f"c{i}", i=i)) for i in range(4)] + [answer("done")]
    h = Harness(script, [step], runs=runs, clock=clock, config=AgentConfig(lease_s=LEASE_S))

    run = await h.run("four steps")

    assert run.status is RunStatus.SUCCEEDED
    assert len(h.llm.requests) == 5
    # no read and no renewal before the second to the fourth model call (the lease was fresh)...
    assert seen == [(0, 0)] * 4
    # ...and before the fifth, 24 s into a 30 s lease, one renewal and one read made sure of it
    assert (runs.gets, runs.renewals) == (1, 1)


async def test_a_side_effect_recorded_on_a_run_held_past_its_first_lease_renews_the_lease_not_rewinds_it() -> None:
    clock, runs = FixedClock(), InMemoryRunRepository()
    lapsed_during_charge: list[list[Run]] = []

    @tool(idempotent=True)
    async def lookup(q: str) -> str:
        """Look something up, slowly.

        Args:
            q: What.
        """
        clock.advance(LEASE_S * 2 / 3)
        # the lease keeper renews meanwhile (its own task, on its own time)
        await runs.renew_leases([RUN_1], now=clock.now(), until=clock.now() + timedelta(seconds=LEASE_S))
        clock.advance(LEASE_S * 2 / 3)
        await runs.renew_leases([RUN_1], now=clock.now(), until=clock.now() + timedelta(seconds=LEASE_S))
        return "found"

    @tool
    async def charge(amount: int) -> str:
        """Charge (not idempotent: recorded on the run before it starts).

        Args:
            amount: How much.
        """
        lapsed_during_charge.append(await runs.lapsed(clock.now()))
        return "charged"

    script = [calls(call("lookup", q="x")), calls(call("charge", call_id="c2", amount=5)), answer("done")]
    h = Harness(script, [lookup, charge], runs=runs, clock=clock, config=AgentConfig(lease_s=LEASE_S))

    run = await h.run("look, then charge")

    assert run.status is RunStatus.SUCCEEDED
    # the save that recorded the call carried a fresh lease, not the claim's (40 s past by then):
    # a sweeper looking while the side effect ran found nothing to take over
    assert lapsed_during_charge == [[]]


async def test_the_sweeper_takes_a_run_over_only_once_its_lease_lapsed_by_the_grace() -> None:
    lease_s = 3.0
    h = Harness([answer("done")], config=AgentConfig(lease_s=lease_s))
    run = (await h.create.execute(CreateRunInput(owner=OWNER, goal="left behind"))).run
    now = h.clock.now()
    # an executor took it and stopped renewing (it died, or its renewal is on its way)
    assert await h.runs.claim(run.id, attempt=0, now=now, until=now + timedelta(seconds=lease_s)) is not None
    recover = RecoverLapsedRuns(
        runs=h.runs, scheduler=h.scheduler, clock=h.clock, max_attempts=3, grace_s=lapse_grace_s(lease_s)
    )

    h.clock.advance(lease_s + 0.4)  # lapsed 0.4 s ago: within the grace (half a second for a 3 s lease)
    assert await recover.execute() == RecoveryPass()
    h.clock.advance(0.2)
    assert await recover.execute() == RecoveryPass(resumed=1)

    await h.scheduler.shutdown(30)
    done = await h.runs.get(run.id)
    assert done is not None
    assert (done.status, done.attempt) == (RunStatus.SUCCEEDED, 2)
