"""An in-memory sliding-window RateLimiter."""

from collections import defaultdict, deque

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.rate_limiter import RateDecision, RateLimiter


class InMemoryRateLimiter(RateLimiter):
    """A sliding window log per key; atomic because it never awaits between read and write."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._hits: defaultdict[str, deque[float]] = defaultdict(deque)

    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        """Count one request and say whether it may pass."""
        now = self._clock.monotonic()
        hits = self._hits[key]
        while hits and hits[0] <= now - window_s:
            hits.popleft()
        if len(hits) >= limit:
            return RateDecision(allowed=False, retry_after_s=max(hits[0] + window_s - now, 0.0), remaining=0)
        hits.append(now)
        return RateDecision(allowed=True, remaining=limit - len(hits))
