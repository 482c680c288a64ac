"""RateLimiter contract: a sliding window per key, atomic under concurrency, with refunds.

Run against the in-memory limiter, the Redis one, and the fallback limiter over a Redis that answers
and over one that is down (where its per-process window does the counting).
"""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from redis.asyncio import Redis

from agentkit.adapters.fallback_rate_limiter import FallbackRateLimiter
from agentkit.adapters.memory import FixedClock, InMemoryRateLimiter
from agentkit.adapters.redis import RedisRateLimiter, create_redis
from agentkit.application.ports.rate_limiter import RateLimiter


@dataclass
class LimiterKit:
    """A limiter, and a way to let time pass for it."""

    limiter: RateLimiter
    clock: FixedClock
    server_time: bool  # the window runs on Redis's clock: time must really pass

    async def wait(self, seconds: float) -> None:
        self.clock.advance(seconds)
        if self.server_time:
            await asyncio.sleep(seconds)


@pytest.fixture
async def dead_redis(unused_tcp_port: int) -> AsyncIterator[Redis]:
    """A client of a Redis that is down: nothing listens on this loopback port."""
    client = create_redis(f"redis://127.0.0.1:{unused_tcp_port}/0")
    yield client
    await client.aclose()


@pytest.fixture(
    params=[
        "memory",
        pytest.param("redis", marks=pytest.mark.integration),
        pytest.param("fallback", marks=pytest.mark.integration),
        "fallback-redis-down",
    ]
)
def kit(request: pytest.FixtureRequest) -> LimiterKit:
    """One limiter of each kind (a sync fixture: the server fixtures start outside the event loop)."""
    clock = FixedClock()
    if request.param == "memory":
        return LimiterKit(InMemoryRateLimiter(clock), clock, server_time=False)
    if request.param == "fallback-redis-down":
        dead = RedisRateLimiter(request.getfixturevalue("dead_redis"))
        return LimiterKit(FallbackRateLimiter(dead, InMemoryRateLimiter(clock), clock=clock), clock, server_time=False)
    redis: Redis = request.getfixturevalue("redis_client")
    shared = RedisRateLimiter(redis, prefix=request.getfixturevalue("redis_prefix"))
    if request.param == "redis":
        return LimiterKit(shared, clock, server_time=True)
    return LimiterKit(FallbackRateLimiter(shared, InMemoryRateLimiter(clock), clock=clock), clock, server_time=True)


async def test_the_limit_passes_and_the_next_request_is_told_how_long_to_wait(kit: LimiterKit) -> None:
    decisions = [await kit.limiter.hit("key-1", limit=3, window_s=60) for _ in range(4)]

    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert 59 < decisions[3].retry_after_s <= 60


async def test_keys_have_windows_of_their_own(kit: LimiterKit) -> None:
    for _ in range(2):
        await kit.limiter.hit("key-1", limit=2, window_s=60)

    assert not (await kit.limiter.hit("key-1", limit=2, window_s=60)).allowed
    assert (await kit.limiter.hit("key-2", limit=2, window_s=60)).allowed


async def test_the_window_slides_and_refused_requests_do_not_count(kit: LimiterKit) -> None:
    assert (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed
    await kit.wait(0.5)
    assert (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed
    refused = await kit.limiter.hit("key-1", limit=2, window_s=1)
    assert not refused.allowed
    assert 0.2 < refused.retry_after_s <= 0.5

    await kit.wait(0.6)  # the first request left the window; the refused one never entered it

    assert (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed
    assert not (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed


async def test_concurrent_callers_never_get_more_than_the_limit(kit: LimiterKit) -> None:
    async def caller() -> list[bool]:
        return [(await kit.limiter.hit("key-1", limit=30, window_s=60)).allowed for _ in range(3)]

    results = await asyncio.gather(*(caller() for _ in range(20)))

    assert sum(allowed for batch in results for allowed in batch) == 30


async def test_a_refunded_request_gives_its_place_back(kit: LimiterKit) -> None:
    first = await kit.limiter.hit("key-1", limit=2, window_s=60)
    second = await kit.limiter.hit("key-1", limit=2, window_s=60)
    refused = await kit.limiter.hit("key-1", limit=2, window_s=60)
    assert second.receipt is not None
    assert refused.receipt is None  # a refused request was never counted: nothing to refund

    await kit.limiter.refund("key-1", second.receipt)

    again = await kit.limiter.hit("key-1", limit=2, window_s=60)
    assert again.allowed
    assert not (await kit.limiter.hit("key-1", limit=2, window_s=60)).allowed
    assert first.receipt != second.receipt != again.receipt


async def test_a_refund_takes_back_only_its_own_request(kit: LimiterKit) -> None:
    counted = await kit.limiter.hit("key-1", limit=2, window_s=60)
    assert counted.receipt is not None
    await kit.limiter.hit("key-1", limit=2, window_s=60)

    await kit.limiter.refund("key-2", counted.receipt)  # another key's window
    await kit.limiter.refund("key-1", "no-such-receipt")

    assert not (await kit.limiter.hit("key-1", limit=2, window_s=60)).allowed
    await kit.limiter.refund("key-1", counted.receipt)
    await kit.limiter.refund("key-1", counted.receipt)  # twice is once
    assert (await kit.limiter.hit("key-1", limit=2, window_s=60)).allowed
    assert not (await kit.limiter.hit("key-1", limit=2, window_s=60)).allowed
