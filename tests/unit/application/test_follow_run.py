"""RunEventFeed and FollowRun on the in-memory adapters: what a follower sees, whatever the log kept."""

import asyncio
from datetime import UTC, datetime

import msgspec
import pytest

from agentkit.adapters.memory import InMemoryRunEventLog, InMemoryRunRepository, InMemoryTraceSink
from agentkit.application.errors import RunNotFound
from agentkit.application.observation import ObservedRunRepository, RunEventFeed, event_feed
from agentkit.application.pipeline.entries import StepEntry, TraceHealth
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.ports.run_event_log import (
    ChildDeltaEvent,
    ChildEvent,
    DeltaEvent,
    EventId,
    LoggedEvent,
    StatusEvent,
    StepEvent,
)
from agentkit.application.runs.follow_run import FollowRun, RunFollower
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.messages import Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, PromptDelta, Step
from tests.sample_tools import add
from tests.unit.application.harness import OWNER, Harness, answer, call, calls

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def summary(entries: list[LoggedEvent | None]) -> list[str]:
    """Each item as `status:<status>`, `step:<n>` or `keep-alive`."""
    out = []
    for entry in entries:
        if entry is None:
            out.append("keep-alive")
        elif isinstance(entry.event, StatusEvent):
            out.append(f"status:{entry.event.run.status.value}")
        elif isinstance(entry.event, StepEvent):
            out.append(f"step:{entry.event.step.step_no}")
        elif isinstance(entry.event, ChildEvent):
            out.append(f"child:{entry.event.run.status.value}")
        elif isinstance(entry.event, ChildDeltaEvent):
            out.append(f"child_delta:{entry.event.run_id}")
        else:
            out.append(f"delta:{entry.event.step_no}:{entry.event.kind}:{entry.event.text}")
    return out


async def collect(follower: RunFollower, limit: int = 50) -> list[LoggedEvent | None]:
    found: list[LoggedEvent | None] = []
    async for entry in follower:
        found.append(entry)
        if len(found) >= limit:
            break
    return found


def follow(harness: Harness, log: InMemoryRunEventLog, idle_s: float = 0.01) -> FollowRun:
    return FollowRun(runs=harness.runs, log=log, scheduler=harness.scheduler, idle_s=idle_s)


def new_run(status: RunStatus = RunStatus.PENDING) -> Run:
    return Run(id=RunId("run-1"), owner=OWNER, goal="g", status=status, created_at=NOW)


async def test_the_feed_logs_status_changes_only_and_steps_without_the_prompt_they_sent() -> None:
    log = InMemoryRunEventLog()
    pipeline = StepPipeline(trace=InMemoryTraceSink(), run_observers=RunEventFeed(log))
    repository = ObservedRunRepository(InMemoryRunRepository(), pipeline)
    pending = new_run()
    running = runs.start(pending, now=NOW)
    step = LLMStep(run_id=pending.id, step_no=1, created_at=NOW, latency_ms=1.0, sent=PromptDelta(messages=()))

    await repository.add(pending)
    await repository.save(running)
    await repository.save(runs.add_spend(running, Usage(), 0.5))  # saved again, nothing a follower sees changed
    pipeline.put(StepEntry(step, TraceHealth()))
    await repository.save(msgspec.structs.replace(running, cancel_requested=True))
    ended = runs.end(running, RunStatus.CANCELLED, now=NOW, reason="asked")
    await repository.save(ended)
    await repository.save(ended)  # stored again unchanged
    await pipeline.deliver()

    entries = await log.read(pending.id, after=None, block_s=0)
    assert summary(list(entries)) == [
        "status:pending",
        "status:running",
        "step:1",
        "status:running",
        "status:cancelled",
    ]
    logged_step = entries[2].event
    assert isinstance(logged_step, StepEvent)
    assert isinstance(logged_step.step, LLMStep)
    assert logged_step.step.sent is None


async def test_a_follower_of_a_finished_run_gets_its_whole_log_and_the_end() -> None:
    log = InMemoryRunEventLog()
    harness = Harness([calls(call("add", a=1, b=2)), answer("3")], [add])
    feed = RunEventFeed(log)
    run = await harness.run()
    for status_run in (new_run_of(run, RunStatus.PENDING), new_run_of(run, RunStatus.RUNNING)):
        feed.on_run(status_run)
    for step in await harness.steps(run):
        feed.on_step(step)
    feed.on_run(run)

    entries = await collect(await follow(harness, log).execute(run.id, OWNER))

    assert summary(entries) == ["status:pending", "status:running", "step:1", "step:2", "step:3", "status:succeeded"]


def new_run_of(run: Run, status: RunStatus) -> Run:
    return msgspec.structs.replace(run, status=status, finished_at=None, answer=None)


async def test_a_log_that_lost_the_start_is_preceded_by_the_stored_run() -> None:
    log = InMemoryRunEventLog()
    harness = Harness([answer("done")])
    run = await harness.run()  # its events never reached the log (Redis was down)
    log.append(run.id, StepEvent(step=(await harness.steps(run))[0]))

    entries = await collect(await follow(harness, log).execute(run.id, OWNER))

    # the stored run comes first; it had ended, so nothing else follows
    assert summary(entries) == ["status:succeeded"]
    assert entries[0] is not None
    assert entries[0].id == "0-0"


async def test_a_run_that_ended_without_its_end_in_the_log_ends_with_the_stored_run() -> None:
    log = InMemoryRunEventLog()
    harness = Harness([answer("done")])
    run = await harness.run()
    log.append(run.id, StatusEvent(run=new_run_of(run, RunStatus.PENDING)))
    steps: list[Step] = await harness.steps(run)
    log.append(run.id, StepEvent(step=steps[0]))

    entries = await collect(await follow(harness, log).execute(run.id, OWNER))

    assert summary(entries) == ["status:pending", "step:1", "status:succeeded"]
    last, before = entries[-1], entries[-2]
    assert last is not None
    assert before is not None
    assert last.id == before.id  # it stands where the log ended


async def test_a_quiet_run_gets_keep_alives_and_a_resumed_follower_only_what_is_new() -> None:
    log = InMemoryRunEventLog()
    harness = Harness([])
    pending = new_run()
    await harness.runs.add(pending)
    log.append(pending.id, StatusEvent(run=pending))
    follower = await follow(harness, log).execute(pending.id, OWNER)

    quiet = await collect(follower, limit=3)
    running = runs.start(pending, now=NOW)
    log.append(pending.id, StatusEvent(run=running))
    resumed = await collect(await follow(harness, log).execute(pending.id, OWNER, after=EventId("0-1")), limit=1)

    assert summary(quiet) == ["status:pending", "keep-alive", "keep-alive"]
    assert summary(resumed) == ["status:running"]


async def test_a_follower_stops_when_the_process_stops() -> None:
    log = InMemoryRunEventLog()
    harness = Harness([])
    pending = new_run()
    await harness.runs.add(pending)
    log.append(pending.id, StatusEvent(run=pending))
    follower = await follow(harness, log, idle_s=60).execute(pending.id, OWNER)
    harness.scheduler.begin_shutdown(0)

    assert summary(await collect(follower)) == ["status:pending"]


async def test_another_owner_cannot_follow_a_run() -> None:
    harness = Harness([])
    await harness.runs.add(new_run())

    with pytest.raises(RunNotFound):
        await follow(harness, InMemoryRunEventLog()).execute(RunId("run-1"), OwnerId("someone-else"))


async def test_a_client_that_connects_before_the_first_event_is_written_gets_it_once() -> None:
    log = InMemoryRunEventLog()
    harness = Harness([])
    pending = new_run()
    await harness.runs.add(pending)  # stored; its event not in the log yet (the writer sends it a moment later)
    follower = await follow(harness, log, idle_s=60).execute(pending.id, OWNER)

    async def first_two() -> list[LoggedEvent | None]:
        return await collect(follower, limit=2)

    reading = asyncio.create_task(first_two())
    await asyncio.sleep(0)
    log.append(pending.id, StatusEvent(run=pending))
    log.append(pending.id, StatusEvent(run=runs.start(pending, now=NOW)))

    entries = await asyncio.wait_for(reading, 30)
    assert summary(entries) == ["status:pending", "status:running"]
    assert [entry.id for entry in entries if entry is not None] == ["0-1", "0-2"]


async def test_the_feed_forgets_its_oldest_child_when_full_and_still_copies_a_new_childs_fragments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # children whose ends were stored by another process are never popped: the oldest must give way
    monkeypatch.setattr(event_feed, "_MAX_CHILDREN", 2)
    log = InMemoryRunEventLog()
    feed = RunEventFeed(log)
    parent = RunId("parent")
    children = [RunId(f"child-{n}") for n in range(3)]
    for child in children:
        feed.on_run(msgspec.structs.replace(new_run(RunStatus.RUNNING), id=child, parent_run_id=parent))
    for child in children:
        feed.on_delta(child, DeltaEvent(step_no=1, kind="text", index=0, text="hi"))

    logged = await log.read(parent, after=None, block_s=0)
    copied = [entry.event.run_id for entry in logged if isinstance(entry.event, ChildDeltaEvent)]
    assert copied == children[1:]
