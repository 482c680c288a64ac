"""The Redis RateLimiter: a sliding-window log per key, checked and counted by one Lua script."""

import hashlib
import math
import os

from redis.asyncio import Redis

from agentkit.adapters.outage import store_outage
from agentkit.application.ports.rate_limiter import RateDecision, RateLimiter

# KEYS[1] the window's sorted set; ARGV: limit, window in microseconds, a unique member (the receipt).
# Redis runs a script atomically, so check-then-add cannot interleave between callers, and the
# time comes from the server's clock, the one clock every AgentKit process shares.
_SLIDING_WINDOW_LUA = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {0, tonumber(oldest[2]) + window - now, 0}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
return {1, 0, limit - count - 1}
"""


_redis = store_outage("Redis")


class RedisRateLimiter(RateLimiter):
    """Allows `limit` requests per key in any `window_s` seconds, across every process sharing the Redis.

    Each request is a member of a sorted set scored by its time; members older than the window are
    dropped first. A refused request is not counted, and its `retry_after_s` is when the oldest
    counted request leaves the window. A counted request's member is random and is its receipt, so a
    refund removes exactly that one. Keys are hashed, so an API key never appears in Redis.

    Args:
        client: The Redis client.
        prefix: Namespace of every key.
    """

    def __init__(self, client: Redis, *, prefix: str = "agentkit:") -> None:
        self._client = client
        self._prefix = prefix
        self._script = client.register_script(_SLIDING_WINDOW_LUA)

    @_redis
    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        """Count one request for `key` and say whether it may pass."""
        window_us = max(math.ceil(window_s * 1_000_000), 1)
        member = os.urandom(8).hex()
        allowed, wait_us, remaining = await self._script(keys=[self._key(key)], args=[limit, window_us, member])
        return RateDecision(
            allowed=bool(allowed),
            retry_after_s=int(wait_us) / 1_000_000,
            remaining=int(remaining),
            receipt=member if allowed else None,
        )

    @_redis
    async def refund(self, key: str, receipt: str) -> None:
        """Remove the counted request with this receipt from the window."""
        await self._client.zrem(self._key(key), receipt)

    def _key(self, key: str) -> str:
        return f"{self._prefix}ratelimit:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
