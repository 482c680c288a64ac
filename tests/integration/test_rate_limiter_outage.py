"""The fallback limiter against a real Redis of the test's own that dies, comes back and freezes."""

import asyncio
import hashlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
from structlog.testing import capture_logs

from agentkit.adapters.fallback_rate_limiter import FallbackRateLimiter
from agentkit.adapters.memory import FixedClock, InMemoryRateLimiter
from agentkit.adapters.redis import RedisRateLimiter, create_redis
from tests.redis_process import RedisProcess, redis_process

pytestmark = pytest.mark.integration

PREFIX = "outage-test:"
KEY = "runs:key_1"


@dataclass
class Rig:
    server: RedisProcess
    clock: FixedClock
    limiter: FallbackRateLimiter

    async def counted_in_redis(self) -> int:
        """Requests the Redis window holds for KEY (read with a fresh client of its own)."""
        digest = hashlib.sha256(KEY.encode()).hexdigest()[:32]
        observer = create_redis(self.server.url)
        try:
            return int(await observer.zcard(f"{PREFIX}ratelimit:{digest}"))
        finally:
            await observer.aclose()

    async def allowed(self, count: int, *, limit: int = 5) -> list[bool]:
        return [(await self.limiter.hit(KEY, limit=limit, window_s=60)).allowed for _ in range(count)]


@pytest.fixture
def own_redis() -> Iterator[RedisProcess]:
    with redis_process() as server:
        yield server


@pytest.fixture
async def rig(own_redis: RedisProcess) -> AsyncIterator[Rig]:
    clock = FixedClock()
    client = create_redis(own_redis.url)
    shared = RedisRateLimiter(client, prefix=PREFIX)
    limiter = FallbackRateLimiter(shared, InMemoryRateLimiter(clock), clock=clock, timeout_s=0.5)
    yield Rig(own_redis, clock, limiter)
    await client.aclose()


async def test_the_count_moves_to_the_process_while_redis_is_down_and_back_when_it_returns(rig: Rig) -> None:
    assert await rig.allowed(2) == [True, True]
    assert await rig.counted_in_redis() == 2

    rig.server.stop()
    with capture_logs() as logs:
        during = await rig.allowed(6)
    assert during == [True] * 5 + [False]  # nothing refused for want of Redis; the per-process limit holds
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["rate_limiter_fallback"]

    rig.server.start()  # same port, empty (no persistence)
    with capture_logs() as logs:
        for _ in range(100):  # the first probes may meet connections the old server left behind
            rig.clock.advance(1.0)
            await rig.allowed(1)
            if await rig.counted_in_redis() == 1:
                break
            await asyncio.sleep(0.1)
    assert await rig.counted_in_redis() == 1
    assert "rate_limiter_recovered" in [e["event"] for e in logs]
    assert await rig.allowed(5) == [True] * 4 + [False]  # Redis's window again: 1 + 4 = 5


async def test_a_frozen_redis_costs_a_request_the_timeout_not_an_endless_wait(rig: Rig) -> None:
    assert await rig.allowed(1) == [True]
    rig.server.freeze()
    try:
        with capture_logs() as logs:
            during = await asyncio.wait_for(rig.allowed(3), 30)
    finally:
        rig.server.thaw()

    assert during == [True, True, True]
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [(e["event"], e["error"]) for e in warnings] == [
        ("rate_limiter_fallback", "Redis did not answer within 0.5 s")
    ]
