"""Run events over Redis pub/sub and the SAQ queue of runs, on real Redis servers."""

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis
from saq.queue.redis import RedisQueue

from agentkit.adapters.queue import RunJobs
from agentkit.adapters.redis import RedisRunEvents, create_redis
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus
from tests.redis_process import RedisProcess, redis_process

WAIT_S = 30.0  # generous: only a failure waits this long


@pytest.fixture
def own_redis() -> Iterator[RedisProcess]:
    """A Redis of this test's own, to restart mid-test."""
    with redis_process() as server:
        yield server


def run_at(status: RunStatus = RunStatus.PENDING, attempt: int = 0) -> Run:
    """A run as the queue sees it."""
    return Run(
        id=RunId(str(uuid.uuid4())),
        owner=OwnerId("k"),
        goal="g",
        status=status,
        attempt=attempt,
        created_at=datetime.now(UTC),
    )


async def test_an_end_published_by_one_process_wakes_a_waiter_in_another(
    redis_client: Redis, redis_prefix: str
) -> None:
    waiting, ending = (
        RedisRunEvents(redis_client, prefix=redis_prefix),
        RedisRunEvents(redis_client, prefix=redis_prefix),
    )
    await waiting.start()
    run = run_at(RunStatus.SUCCEEDED)
    try:
        with waiting.watch_end(run.id) as waiter:
            await ending.publish_ended(run)
            assert await waiter.wait(WAIT_S)
            assert waiter.run is None  # from another process only the word comes: the waiter reads the run
        with waiting.watch_end(run.id) as waiter:
            assert not await waiter.wait(0.05)  # a waiter opened later hears nothing of an earlier end
    finally:
        await waiting.aclose()


async def test_a_cancel_published_anywhere_reaches_every_process_handler(
    redis_client: Redis, redis_prefix: str
) -> None:
    worker, api = RedisRunEvents(redis_client, prefix=redis_prefix), RedisRunEvents(redis_client, prefix=redis_prefix)
    heard: list[RunId] = []
    arrived = asyncio.Event()

    def on_cancel(run_id: RunId) -> None:
        heard.append(run_id)
        arrived.set()

    worker.on_cancel(on_cancel)
    await worker.start()
    try:
        await api.publish_cancel(RunId("run-7"))
        await asyncio.wait_for(arrived.wait(), WAIT_S)
    finally:
        await worker.aclose()
    assert heard == ["run-7"]


async def test_the_subscription_comes_back_after_a_redis_restart(own_redis: RedisProcess) -> None:
    client = create_redis(own_redis.url)
    events = RedisRunEvents(client, prefix="t:")
    await events.start()
    run = run_at(RunStatus.SUCCEEDED)
    try:
        own_redis.stop()
        own_redis.start()
        publisher = create_redis(own_redis.url)
        with events.watch_end(run.id) as waiter:
            # woken once resubscribed (an end may have been missed), then by the end itself
            for _ in range(100):
                await publisher.publish("t:run-ended", run.id)
                if await waiter.wait(0.2):
                    break
            else:
                pytest.fail("the subscription did not come back")
        await publisher.aclose()
    finally:
        await events.aclose()
        await client.aclose()


async def test_a_run_is_queued_once_per_attempt(redis_client: Redis, redis_prefix: str) -> None:
    queue = RedisQueue(redis_client, name=f"{redis_prefix}runs")
    jobs = RunJobs(queue, job_timeout_s=60)
    await jobs.connect()
    run = run_at()

    await jobs.enqueue(run)
    await jobs.enqueue(run)  # the sweeper again, while the first job waits
    resumed = run_at(RunStatus.RUNNING, attempt=1)
    await jobs.enqueue(resumed)

    assert await redis_client.llen(queue.namespace("queued")) == 2
    job = await queue.job(f"{run.id}:0")
    assert job is not None
    assert job.kwargs == {"run_id": run.id, "run_attempt": 0, "run_status": "pending"}
    assert job.retries == 1  # SAQ never runs it twice: a resume is a job of its own attempt


async def test_a_job_a_dead_worker_took_off_the_queue_does_not_block_its_run(
    redis_client: Redis, redis_prefix: str
) -> None:
    queue = RedisQueue(redis_client, name=f"{redis_prefix}runs")
    jobs = RunJobs(queue, job_timeout_s=60)
    await jobs.connect()
    run = run_at()
    await jobs.enqueue(run)
    # a worker takes the job off the queue (as SAQ's dequeue does) and dies before marking it
    taken = await redis_client.blmove(queue.namespace("queued"), queue.namespace("active"), 1, "LEFT", "RIGHT")
    assert taken is not None

    await jobs.enqueue(run)  # the sweeper finds the run lapsed

    queued = await redis_client.lrange(queue.namespace("queued"), 0, -1)
    assert len(queued) == 1
    assert queued[0] != taken  # a job of its own, not the lost one
