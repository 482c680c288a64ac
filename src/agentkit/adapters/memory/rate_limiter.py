"""An in-memory sliding-window RateLimiter."""

import itertools
from collections import deque

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.rate_limiter import RateDecision, RateLimiter

_FIRST_SWEEP_AT = 1024


class _Window:
    """One key's counted requests, oldest first: (time, receipt)."""

    __slots__ = ("hits", "window_s")

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.hits: deque[tuple[float, str]] = deque()

    def prune(self, now: float) -> None:
        while self.hits and self.hits[0][0] <= now - self.window_s:
            self.hits.popleft()


class InMemoryRateLimiter(RateLimiter):
    """A sliding window log per key; atomic because it never awaits between read and write.

    Also the per-process fallback while Redis is down, where keys include client addresses: windows
    that have emptied are dropped whenever the number of keys has doubled since the last sweep, so a
    stream of one-off keys costs amortised constant time and bounded memory.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._windows: dict[str, _Window] = {}
        self._receipts = itertools.count(1)
        self._sweep_at = _FIRST_SWEEP_AT

    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        """Count one request and say whether it may pass."""
        now = self._clock.monotonic()
        window = self._windows.get(key)
        if window is None:
            if len(self._windows) >= self._sweep_at:
                self._sweep(now)
            window = self._windows[key] = _Window(window_s)
        window.window_s = window_s
        window.prune(now)
        hits = window.hits
        if len(hits) >= limit:
            return RateDecision(allowed=False, retry_after_s=max(hits[0][0] + window_s - now, 0.0), remaining=0)
        receipt = str(next(self._receipts))
        hits.append((now, receipt))
        return RateDecision(allowed=True, remaining=limit - len(hits), receipt=receipt)

    async def refund(self, key: str, receipt: str) -> None:
        """Uncount the request with this receipt, if it is still in its window."""
        window = self._windows.get(key)
        if window is None:
            return
        hits = window.hits
        for index in range(len(hits) - 1, -1, -1):  # newest first: a refund follows its hit closely
            if hits[index][1] == receipt:
                del hits[index]
                return

    def _sweep(self, now: float) -> None:
        for key, window in list(self._windows.items()):
            window.prune(now)
            if not window.hits:
                del self._windows[key]
        self._sweep_at = max(2 * len(self._windows), _FIRST_SWEEP_AT)
