"""RateLimiter contract: a sliding window per key, atomic under concurrency."""

import asyncio

from tests.contract.conftest import StateKit


async def test_the_limit_passes_and_the_next_request_is_told_how_long_to_wait(kit: StateKit) -> None:
    decisions = [await kit.limiter.hit("key-1", limit=3, window_s=60) for _ in range(4)]

    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert 59 < decisions[3].retry_after_s <= 60


async def test_keys_have_windows_of_their_own(kit: StateKit) -> None:
    for _ in range(2):
        await kit.limiter.hit("key-1", limit=2, window_s=60)

    assert not (await kit.limiter.hit("key-1", limit=2, window_s=60)).allowed
    assert (await kit.limiter.hit("key-2", limit=2, window_s=60)).allowed


async def test_the_window_slides_and_refused_requests_do_not_count(kit: StateKit) -> None:
    assert (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed
    await kit.wait(0.5)
    assert (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed
    refused = await kit.limiter.hit("key-1", limit=2, window_s=1)
    assert not refused.allowed
    assert 0.2 < refused.retry_after_s <= 0.5

    await kit.wait(0.6)  # the first request left the window; the refused one never entered it

    assert (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed
    assert not (await kit.limiter.hit("key-1", limit=2, window_s=1)).allowed


async def test_concurrent_callers_never_get_more_than_the_limit(kit: StateKit) -> None:
    async def caller() -> list[bool]:
        return [(await kit.limiter.hit("key-1", limit=30, window_s=60)).allowed for _ in range(3)]

    results = await asyncio.gather(*(caller() for _ in range(20)))

    assert sum(allowed for batch in results for allowed in batch) == 30
