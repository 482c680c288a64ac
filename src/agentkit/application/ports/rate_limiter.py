"""The RateLimiter port."""

from abc import abstractmethod
from typing import Protocol

import msgspec


class RateDecision(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a request may pass, and if not, how long to wait."""

    allowed: bool
    retry_after_s: float = 0.0
    remaining: int = 0


class RateLimiter(Protocol):
    """A sliding-window limit per key, atomic under concurrency."""

    @abstractmethod
    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        """Count one request for `key`; allow it if fewer than `limit` passed in the last `window_s`."""
