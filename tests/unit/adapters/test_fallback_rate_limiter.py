"""FallbackRateLimiter: the shared limiter while it answers, a per-process window while it does not."""

import asyncio

import pytest
from structlog.testing import capture_logs

from agentkit.adapters.fallback_rate_limiter import FallbackRateLimiter
from agentkit.adapters.memory import FixedClock, InMemoryRateLimiter
from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.rate_limiter import RateDecision


class FlakyRateLimiter(InMemoryRateLimiter):
    """An in-memory limiter standing in for Redis: it can be down (StoreUnavailable) or hang."""

    def __init__(self, clock: FixedClock) -> None:
        super().__init__(clock)
        self.down = False
        self.hanging = False
        self.calls = 0

    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        await self._answer()
        return await super().hit(key, limit=limit, window_s=window_s)

    async def refund(self, key: str, receipt: str) -> None:
        await self._answer()
        await super().refund(key, receipt)

    async def _answer(self) -> None:
        self.calls += 1
        if self.hanging:
            await asyncio.Event().wait()  # a frozen server: no answer, ever
        if self.down:
            raise StoreUnavailable("Redis is unavailable (ConnectionError)")


class Rig:
    def __init__(self, *, timeout_s: float = 1.0) -> None:
        self.clock = FixedClock()
        self.redis = FlakyRateLimiter(self.clock)
        self.local = InMemoryRateLimiter(self.clock)
        self.limiter = FallbackRateLimiter(
            self.redis, self.local, clock=self.clock, timeout_s=timeout_s, probe_interval_s=1.0
        )

    async def hits(self, count: int, *, limit: int = 3) -> list[bool]:
        return [(await self.limiter.hit("k", limit=limit, window_s=60)).allowed for _ in range(count)]


async def test_while_redis_answers_it_does_all_the_counting() -> None:
    rig = Rig()

    assert await rig.hits(4) == [True, True, True, False]
    assert rig.redis.calls == 4
    assert (await rig.local.hit("k", limit=3, window_s=60)).remaining == 2  # the fallback saw nothing


async def test_an_outage_moves_the_count_into_the_process_and_is_logged_once() -> None:
    rig = Rig()
    rig.redis.down = True

    with capture_logs() as logs:
        allowed = await rig.hits(5)

    assert allowed == [True, True, True, False, False]  # the limit still holds, per process
    assert rig.redis.calls == 1  # no request waits on Redis until the next probe
    assert [(e["event"], e["log_level"]) for e in logs] == [("rate_limiter_fallback", "warning")]
    assert logs[0]["error"] == "Redis is unavailable (ConnectionError)"


async def test_one_request_per_interval_probes_and_the_first_answer_ends_the_outage() -> None:
    rig = Rig()
    rig.redis.down = True
    with capture_logs() as logs:
        await rig.hits(2)
        rig.clock.advance(1.0)
        await rig.hits(2)  # the first probes, fails and falls back; the second does not try
        assert rig.redis.calls == 2
        rig.redis.down = False
        await rig.hits(2)  # not yet time to probe
        assert rig.redis.calls == 2
        rig.clock.advance(1.0)
        back = await rig.hits(3)

    assert back == [True, True, True]  # Redis's own window, which saw none of the outage's requests
    assert rig.redis.calls == 5
    assert [e["event"] for e in logs] == ["rate_limiter_fallback", "rate_limiter_recovered"]
    assert logs[1]["outage_s"] == 2.0


async def test_a_redis_that_does_not_answer_counts_as_down() -> None:
    rig = Rig(timeout_s=0.05)
    rig.redis.hanging = True

    with capture_logs() as logs:
        decision = await asyncio.wait_for(rig.limiter.hit("k", limit=3, window_s=60), 30)

    assert decision.allowed
    assert logs[0]["event"] == "rate_limiter_fallback"
    assert logs[0]["error"] == "Redis did not answer within 0.05 s"


@pytest.mark.parametrize("outage_at_hit", [True, False])
async def test_a_refund_goes_to_the_limiter_that_counted(outage_at_hit: bool) -> None:
    rig = Rig()
    rig.redis.down = outage_at_hit
    counted = await rig.limiter.hit("k", limit=1, window_s=60)
    assert counted.receipt is not None

    await rig.limiter.refund("k", counted.receipt)

    again = await rig.limiter.hit("k", limit=1, window_s=60)
    assert again.allowed  # the place came back where it was taken
    assert (again.receipt or "")[:2] == counted.receipt[:2]


async def test_a_refund_to_redis_while_it_is_down_is_dropped_not_raised() -> None:
    rig = Rig()
    counted = await rig.limiter.hit("k", limit=1, window_s=60)
    assert counted.receipt is not None
    rig.redis.down = True

    with capture_logs() as logs:
        await rig.limiter.refund("k", counted.receipt)
        after = await rig.limiter.hit("k", limit=1, window_s=60)

    assert after.allowed  # the fallback's own window
    assert [e["event"] for e in logs] == ["rate_limiter_fallback"]
