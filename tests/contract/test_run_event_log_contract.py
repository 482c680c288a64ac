"""RunEventLog contract: each run's events in order, read after an id, waits woken by an append, bounded."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from agentkit.adapters.memory import InMemoryRunEventLog
from agentkit.adapters.redis import RedisRunEventLog
from agentkit.application.ports.run_event_log import (
    LoggedEvent,
    RunEvent,
    RunEventLog,
    StatusEvent,
    StepEvent,
    event_key,
)
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall, Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from agentkit.domain.tools import ToolResult

WAIT_S = 30.0  # generous: only a failure waits this long
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def made_log(request: pytest.FixtureRequest) -> RunEventLog:
    """The log of one backend, trimmed at 50 events a run (a sync fixture: the servers start outside the loop)."""
    if request.param == "memory":
        return InMemoryRunEventLog(max_len=50)
    redis: Redis = request.getfixturevalue("redis_client")
    prefix: str = request.getfixturevalue("redis_prefix")
    return RedisRunEventLog(redis, prefix=prefix, max_len=50, ttl_s=60, max_block_s=WAIT_S)


@pytest.fixture
async def log(made_log: RunEventLog) -> AsyncIterator[RunEventLog]:
    """The log, closed after the test."""
    yield made_log
    await made_log.aclose()


def new_run(status: RunStatus = RunStatus.PENDING) -> Run:
    return Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("k"), goal="g", status=status, created_at=NOW)


def llm_step(run: Run, step_no: int) -> LLMStep:
    call = ToolCall(id=ToolCallId(f"c{step_no}"), name="add", arguments={"a": 1, "b": step_no})
    return LLMStep(
        run_id=run.id,
        step_no=step_no,
        created_at=NOW,
        latency_ms=1.5,
        usage=Usage(input_tokens=10, output_tokens=2),
        tool_calls=(call,),
    )


def tool_step(run: Run, step_no: int) -> ToolStep:
    return ToolStep(
        run_id=run.id,
        step_no=step_no,
        created_at=NOW,
        latency_ms=0.5,
        call_id=ToolCallId(f"c{step_no - 1}"),
        tool_name="add",
        arguments={"a": 1, "b": step_no},
        result=ToolResult(ok=True, output="2"),
    )


async def read_all(log: RunEventLog, run: Run, count: int) -> list[LoggedEvent]:
    """The run's first `count` events, waiting for the writer to send them."""
    found: list[LoggedEvent] = []
    while len(found) < count:
        more = await log.read(run.id, after=found[-1].id if found else None, block_s=WAIT_S)
        assert more, f"only {len(found)} of {count} events arrived"
        found.extend(more)
    return found


async def test_events_read_back_in_the_order_appended_with_growing_ids(log: RunEventLog) -> None:
    run = new_run()
    events: list[RunEvent] = [
        StatusEvent(run=run),
        StatusEvent(run=new_run(RunStatus.RUNNING)),
        StepEvent(step=llm_step(run, 1)),
        StepEvent(step=tool_step(run, 2)),
    ]
    for event in events:
        log.append(run.id, event)

    found = await read_all(log, run, len(events))

    assert [entry.event for entry in found] == events
    keys = [event_key(entry.id) or (-1, -1) for entry in found]
    assert (-1, -1) not in keys
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


async def test_a_read_after_an_id_gives_only_what_came_after_it(log: RunEventLog) -> None:
    run = new_run()
    for step_no in range(1, 6):
        log.append(run.id, StepEvent(step=llm_step(run, step_no)))
    found = await read_all(log, run, 5)

    rest = await log.read(run.id, after=found[1].id, block_s=0)

    assert rest == found[2:]
    assert await log.read(run.id, after=found[-1].id, block_s=0) == []
    assert await log.read(run.id, after=None, block_s=0, limit=2) == found[:2]


async def test_runs_have_logs_of_their_own(log: RunEventLog) -> None:
    first, second = new_run(), new_run()
    log.append(first.id, StatusEvent(run=first))
    log.append(second.id, StatusEvent(run=second))

    assert [entry.event for entry in await read_all(log, first, 1)] == [StatusEvent(run=first)]
    assert [entry.event for entry in await read_all(log, second, 1)] == [StatusEvent(run=second)]
    assert await log.read(new_run().id, after=None, block_s=0) == []


async def test_a_waiting_read_is_woken_by_an_append(log: RunEventLog) -> None:
    run = new_run()
    log.append(run.id, StatusEvent(run=run))
    (first,) = await read_all(log, run, 1)
    waiting = asyncio.create_task(log.read(run.id, after=first.id, block_s=WAIT_S))
    await asyncio.sleep(0.05)  # the read is waiting (were it not, it would still find the event)
    assert not waiting.done()

    log.append(run.id, StepEvent(step=llm_step(run, 1)))

    found = await asyncio.wait_for(waiting, WAIT_S)
    assert [entry.event for entry in found] == [StepEvent(step=llm_step(run, 1))]


async def test_a_waiting_read_with_nothing_new_ends_empty(log: RunEventLog) -> None:
    run = new_run()
    assert await log.read(run.id, after=None, block_s=0.05) == []


async def test_a_long_log_keeps_its_newest_events(log: RunEventLog) -> None:
    run = new_run()
    for step_no in range(1, 301):
        log.append(run.id, StepEvent(step=llm_step(run, step_no)))
    await log.aclose()  # everything sent

    kept = await log.read(run.id, after=None, block_s=0, limit=1000)

    numbers = [entry.event.step.step_no for entry in kept if isinstance(entry.event, StepEvent)]
    assert 50 <= len(numbers) < 300  # about the bound (Redis trims whole nodes)
    assert numbers == list(range(301 - len(numbers), 301))


@pytest.mark.integration
async def test_a_redis_stream_expires_after_its_last_event(redis_client: Redis, redis_prefix: str) -> None:
    log = RedisRunEventLog(redis_client, prefix=redis_prefix, ttl_s=120)
    run = new_run()
    log.append(run.id, StatusEvent(run=run))
    await log.aclose()

    ttl = await redis_client.ttl(log.key(run.id))

    assert 0 < ttl <= 120


@pytest.mark.integration
async def test_appends_redis_does_not_take_are_dropped_and_the_log_goes_on(redis_prefix: str) -> None:
    from agentkit.adapters.redis import create_redis

    down = create_redis("redis://127.0.0.1:1/0", connect_timeout_s=0.2, socket_timeout_s=0.2)
    log = RedisRunEventLog(down, prefix=redis_prefix)
    run = new_run()

    log.append(run.id, StatusEvent(run=run))  # returns at once, never raises
    await log.aclose()  # the writer tried, dropped the batch, and stops

    await down.aclose()
