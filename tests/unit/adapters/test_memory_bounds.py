"""State in memory is bounded: past MEMORY_MAX_RUNS the runs that ended longest ago are forgotten."""

from datetime import UTC, datetime, timedelta

import msgspec

from agentkit.adapters.memory import InMemoryRunEventLog, InMemoryRunRepository, InMemoryTraceSink
from agentkit.application.ports.run_event_log import StatusEvent
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep

T0 = datetime(2026, 12, 2, tzinfo=UTC)


def pending(n: int) -> Run:
    return Run(id=RunId(f"run-{n}"), owner=OwnerId("o"), goal="g", status=RunStatus.PENDING, created_at=T0)


async def finish(repository: InMemoryRunRepository, run: Run, at: int) -> None:
    now = T0 + timedelta(seconds=at)
    started = runs.start(run, now=now)
    await repository.save(runs.succeed(started, now=now, answer="done"))


async def test_past_the_bound_the_runs_that_ended_longest_ago_are_forgotten_with_their_traces() -> None:
    repository = InMemoryRunRepository(max_finished=2)
    trace, log = InMemoryTraceSink(), InMemoryRunEventLog()
    repository.on_forget(trace.forget)
    repository.on_forget(log.forget)
    for n in range(3):
        run = pending(n)
        await repository.add(run)
        await trace.record(LLMStep(run_id=run.id, step_no=1, created_at=T0, latency_ms=1))
        log.append(run.id, StatusEvent(run=run))
    # they end in another order than they began: the one that ended first goes first
    for at, n in enumerate((1, 0, 2)):
        await finish(repository, (await repository.get(RunId(f"run-{n}"))) or pending(n), at)

    assert await repository.get(RunId("run-1")) is None
    assert await trace.steps(RunId("run-1")) == []
    assert await log.read(RunId("run-1"), after=None, block_s=0) == []
    assert [run.id for run in repository.ended()] == ["run-2", "run-0"]
    assert len(await trace.steps(RunId("run-0"))) == 1


async def test_runs_that_have_not_ended_are_never_forgotten() -> None:
    repository = InMemoryRunRepository(max_finished=0)
    for n in range(5):
        await repository.add(pending(n))

    assert all([await repository.get(RunId(f"run-{n}")) for n in range(5)])


async def test_a_forgotten_runs_idempotency_key_is_free_again() -> None:
    repository = InMemoryRunRepository(max_finished=0)
    keyed = msgspec.structs.replace(pending(0), idempotency_key="k", request_fingerprint="fp")
    await repository.add(keyed)

    await finish(repository, keyed, 0)

    assert await repository.get_by_idempotency_key(OwnerId("o"), "k") is None
