"""A run that has its outcome keeps it through a store outage: its writes are retried, its lease kept."""

import asyncio

import pytest

from agentkit.adapters.memory import FailingTraceSink, FixedClock
from agentkit.application.agent import AgentConfig
from agentkit.application.agent.durability import LAST_SAVE_S
from agentkit.application.backoff import Backoff
from agentkit.application.errors import StaleAttempt, StoreUnavailable
from agentkit.application.runs.recover_runs import WORKER_LOST, RecoverLapsedRuns
from agentkit.application.tools import Tool
from agentkit.domain.ids import RunId
from agentkit.domain.run import RunStatus
from tests.sample_tools import add
from tests.unit.application.harness import Harness, answer, call, calls
from tests.unit.application.store_doubles import (
    ClockSleeper,
    FlakyFlushTraceSink,
    GatedTraceSink,
    OutageRunRepository,
    eventually,
)

STEADY = Backoff(first_s=0.1, cap_s=0.4, jitter=lambda: 1.0)  # no randomness: the waits can be compared
RUN_1 = RunId("run-1")
SCRIPT = [calls(call("add", a=2, b=3)), answer("5")]
# idempotent, so the tests see only the writes the run's outcome depends on (not the mark of a call)
ADD = Tool(add.fn, name="add", idempotent=True)


def harness(
    repo: OutageRunRepository, *, backoff: Backoff = STEADY, store_retry_s: float = 300.0
) -> tuple[Harness, ClockSleeper]:
    clock = FixedClock()
    sleeper = ClockSleeper(clock)
    config = AgentConfig(store_retry_s=store_retry_s)
    h = Harness(SCRIPT, [ADD], runs=repo, clock=clock, sleep=sleeper, backoff=backoff, config=config)
    return h, sleeper


async def test_a_final_save_that_fails_is_retried_with_capped_backoff_until_it_lands() -> None:
    repo = OutageRunRepository()
    repo.fail_next_saves(4, of=RunStatus.SUCCEEDED)
    h, sleeper = harness(repo)

    run = await h.run("2 + 3?")

    assert run.status is RunStatus.SUCCEEDED
    assert run.answer == "5"
    assert await repo.get(run.id) == run
    assert repo.count(RunStatus.SUCCEEDED) == 5
    assert sleeper.waits == [0.1, 0.2, 0.4, 0.4]  # doubling, then capped
    assert len(await h.steps(run)) == 3


async def test_the_start_is_retried_through_an_outage_too() -> None:
    repo = OutageRunRepository()
    repo.fail_next_saves(3, of=RunStatus.RUNNING)
    h, sleeper = harness(repo)

    run = await h.run("2 + 3?")

    assert run.status is RunStatus.SUCCEEDED
    assert repo.count(RunStatus.RUNNING) == 4  # claims: 3 refused, then the one that took it
    assert len(sleeper.waits) == 3


async def test_the_lease_is_renewed_while_the_final_save_waits_for_the_store() -> None:
    repo = OutageRunRepository()
    repo.refuse_final = True
    # real waits here: the lease keeper renews on real time, every third of a 0.3 s lease
    h = Harness(SCRIPT, [ADD], runs=repo, backoff=Backoff(first_s=0.01, cap_s=0.05), config=AgentConfig(lease_s=0.3))
    task = asyncio.create_task(h.run("2 + 3?"))

    await eventually(lambda: repo.refused >= 1)
    renewed_before = repo.renewals
    await eventually(lambda: repo.renewals >= renewed_before + 3)
    stored = await repo.get(RUN_1)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING  # held, not given up: the sweeper leaves it alone
    repo.refuse_final = False
    run = await asyncio.wait_for(task, 30)

    assert run.status is RunStatus.SUCCEEDED
    assert await repo.get(RUN_1) == run


async def test_a_store_down_past_the_retry_budget_leaves_the_run_to_the_sweeper() -> None:
    repo = OutageRunRepository()
    repo.refuse_final = True
    h, sleeper = harness(repo, backoff=Backoff(first_s=0.5, cap_s=4.0, jitter=lambda: 1.0), store_retry_s=60)

    with pytest.raises(StoreUnavailable):
        await h.run("2 + 3?")

    assert 60 <= sum(sleeper.waits) <= 60 + LAST_SAVE_S
    assert max(sleeper.waits) <= 4.0
    stored = await repo.get(RUN_1)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING  # not written, never made up
    # released: its lease lapses, and the sweeper ends it once the store is back (here after one attempt)
    repo.refuse_final = False
    h.clock.advance(60)
    recover = RecoverLapsedRuns(runs=repo, scheduler=h.scheduler, clock=h.clock, max_attempts=1)
    assert (await recover.execute()).expired == 1
    expired = await repo.get(RUN_1)
    assert expired is not None
    assert (expired.status, expired.failure_reason) == (RunStatus.EXPIRED, WORKER_LOST)


async def test_a_stale_attempt_stops_the_retries_at_once() -> None:
    repo = OutageRunRepository()
    repo.fail_next_saves(1, of=RunStatus.SUCCEEDED)
    h, _ = harness(repo)
    waits: list[float] = []

    async def sweeper_meanwhile(seconds: float) -> None:
        # while the run waits to retry, a sweeper expires it (its lease lapsed, say)
        waits.append(seconds)
        await repo.expire_lapsed(h.clock.now().replace(year=2100), reason=WORKER_LOST)

    h.loop.deps.pacing.sleep = sweeper_meanwhile

    with pytest.raises(StaleAttempt):
        await h.run("2 + 3?")

    assert len(waits) == 1
    assert repo.count(RunStatus.SUCCEEDED) == 2  # the failed try, then the refused one: no more
    stored = await repo.get(RUN_1)
    assert stored is not None
    assert stored.status is RunStatus.EXPIRED


async def test_the_final_status_is_written_only_once_the_trace_is_stored() -> None:
    repo = OutageRunRepository()
    sink = GatedTraceSink()
    h = Harness(SCRIPT, [ADD], runs=repo, trace=sink, observers=[])
    task = asyncio.create_task(h.run("2 + 3?"))

    await asyncio.wait_for(sink.flushing.wait(), 30)
    stored = await repo.get(RUN_1)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING  # the answer is known, the trace not yet stored
    sink.gate.set()
    run = await asyncio.wait_for(task, 30)

    assert run.status is RunStatus.SUCCEEDED
    assert await repo.get(RUN_1) == run
    assert len(await sink.steps(run.id)) == 3


async def test_a_trace_flush_that_fails_is_retried_before_the_run_ends() -> None:
    repo = OutageRunRepository()
    sink = FlakyFlushTraceSink(failures=2)
    clock = FixedClock()
    sleeper = ClockSleeper(clock)
    h = Harness(SCRIPT, [ADD], runs=repo, trace=sink, observers=[], clock=clock, sleep=sleeper, backoff=STEADY)

    run = await h.run("2 + 3?")

    assert run.status is RunStatus.SUCCEEDED
    assert sink.flushes == 3
    assert sleeper.waits == [0.1, 0.2]


async def test_a_trace_store_down_past_the_budget_fails_the_run_but_keeps_its_answer() -> None:
    repo = OutageRunRepository()
    sink = FlakyFlushTraceSink(failures=10_000)
    clock = FixedClock()
    h = Harness(
        SCRIPT,
        [ADD],
        runs=repo,
        trace=sink,
        observers=[],
        clock=clock,
        sleep=ClockSleeper(clock),
        backoff=STEADY,
        config=AgentConfig(store_retry_s=30),
    )

    run = await h.run("2 + 3?")

    assert run.status is RunStatus.FAILED
    assert run.answer == "5"
    assert run.failure_reason is not None
    assert run.failure_reason.startswith("the run finished, but its steps could not be stored")
    assert await repo.get(RUN_1) == run


async def test_stopping_while_the_store_is_down_gives_up_after_one_bounded_try() -> None:
    repo = OutageRunRepository()
    repo.refuse_final = True
    h, sleeper = harness(repo)
    task = asyncio.create_task(h.run("2 + 3?"))
    await eventually(lambda: repo.refused >= 3, every_s=0)
    slept_before = sum(sleeper.waits)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)

    stored = await repo.get(RUN_1)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING  # left to the sweeper once its lease lapses
    assert sum(sleeper.waits) - slept_before <= LAST_SAVE_S + STEADY.cap_s


async def test_stopping_as_the_store_comes_back_stores_the_result_not_an_interruption() -> None:
    repo = OutageRunRepository()
    repo.refuse_final = True
    h, _ = harness(repo)
    task = asyncio.create_task(h.run("2 + 3?"))
    await eventually(lambda: repo.refused >= 2, every_s=0)

    repo.refuse_final = False
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)

    stored = await repo.get(RUN_1)
    assert stored is not None
    assert (stored.status, stored.answer) == (RunStatus.SUCCEEDED, "5")


async def test_a_trace_sink_that_refuses_steps_is_not_waited_for() -> None:
    repo = OutageRunRepository()
    clock = FixedClock()
    sleeper = ClockSleeper(clock)
    h = Harness(SCRIPT, [ADD], runs=repo, trace=FailingTraceSink(), clock=clock, sleep=sleeper, backoff=STEADY)

    run = await h.run("2 + 3?")

    # the steps never reached the durable sink: no retry can bring them back, so none is tried
    assert run.status is RunStatus.FAILED
    assert sleeper.waits == []
