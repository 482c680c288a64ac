"""Redis specifics: the spec's 30-per-minute limit across callers and processes; prune of sessions."""

import asyncio
from datetime import timedelta

import pytest
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.memory import FixedClock
from agentkit.adapters.postgres import SqlaRunRepository
from agentkit.adapters.redis import RedisRateLimiter, RedisSessionStore, create_redis
from agentkit.application.runs.prune import PruneInput, PruneOldRuns
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.messages import Message
from tests.integration.test_postgres_state import finished_run
from tests.state_fixtures import StateServers

pytestmark = pytest.mark.integration


async def test_thirty_requests_pass_and_the_thirty_first_in_the_minute_is_refused(
    redis_client: Redis, redis_prefix: str
) -> None:
    limiter = RedisRateLimiter(redis_client, prefix=redis_prefix)

    decisions = [await limiter.hit("api-key-1", limit=30, window_s=60) for _ in range(31)]

    assert all(d.allowed for d in decisions[:30])
    assert not decisions[30].allowed
    assert 59 < decisions[30].retry_after_s <= 60


async def test_twenty_concurrent_callers_in_two_processes_share_one_limit(
    state_servers: StateServers, redis_prefix: str
) -> None:
    # Two clients with their own connection pools stand for two AgentKit processes.
    clients = [create_redis(state_servers.redis_url) for _ in range(2)]
    limiters = [RedisRateLimiter(client, prefix=redis_prefix) for client in clients]
    try:

        async def caller(n: int) -> list[bool]:
            limiter = limiters[n % 2]
            return [(await limiter.hit("api-key-1", limit=30, window_s=60)).allowed for _ in range(2)]

        results = await asyncio.gather(*(caller(n) for n in range(20)))
    finally:
        for client in clients:
            await client.aclose()

    assert sum(allowed for batch in results for allowed in batch) == 30


async def test_the_api_key_itself_never_appears_in_redis(redis_client: Redis, redis_prefix: str) -> None:
    await RedisRateLimiter(redis_client, prefix=redis_prefix).hit("sk-secret-key", limit=5, window_s=60)

    keys = [key async for key in redis_client.scan_iter(match=f"{redis_prefix}*")]
    assert keys
    assert not any(b"sk-secret-key" in key for key in keys)


async def test_prune_deletes_old_runs_and_idle_sessions(
    pg_engine: AsyncEngine, redis_client: Redis, redis_prefix: str
) -> None:
    clock = FixedClock()
    runs = SqlaRunRepository(pg_engine)
    # A TTL longer than the test's clock jump: the old session is still alive when prune runs.
    sessions = RedisSessionStore(redis_client, clock=clock, ttl_s=10 * 86400, prefix=redis_prefix)
    old_run, new_run = finished_run(clock.now()), finished_run(clock.now() + timedelta(days=2))
    await runs.add(old_run)
    await runs.add(new_run)
    await sessions.save(OwnerId("k"), SessionId("old"), [Message(role="user", content="hi")])
    clock.advance(timedelta(days=3).total_seconds())
    await sessions.save(OwnerId("k"), SessionId("new"), [Message(role="user", content="hi")])

    result = await PruneOldRuns(runs=runs, sessions=sessions, clock=clock).execute(
        PruneInput(older_than_s=timedelta(days=1).total_seconds())
    )

    assert (result.runs_deleted, result.sessions_deleted) == (1, 1)
    assert await runs.get(old_run.id) is None
    assert await runs.get(new_run.id) == new_run
    assert await sessions.load(OwnerId("k"), SessionId("new")) != []


async def test_more_callers_than_pooled_connections_wait_instead_of_failing(
    state_servers: StateServers, redis_prefix: str
) -> None:
    client = create_redis(state_servers.redis_url)
    limiter = RedisRateLimiter(client, prefix=redis_prefix)
    try:
        decisions = await asyncio.gather(*(limiter.hit(f"key-{i % 7}", limit=1000, window_s=60) for i in range(250)))
    finally:
        await client.aclose()

    assert all(decision.allowed for decision in decisions)
