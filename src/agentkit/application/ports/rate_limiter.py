"""The RateLimiter port."""

from abc import abstractmethod
from typing import Protocol

import msgspec


class RateDecision(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a request may pass, and if not, how long to wait.

    Attributes:
        allowed: The request passed and was counted.
        retry_after_s: When refused, how long until a place frees up.
        remaining: Requests that may still pass in the window.
        receipt: Names the counted request, for `refund`; None when refused.
    """

    allowed: bool
    retry_after_s: float = 0.0
    remaining: int = 0
    receipt: str | None = None


class RateLimiter(Protocol):
    """A sliding-window limit per key, atomic under concurrency."""

    @abstractmethod
    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        """Count one request for `key`; allow it if fewer than `limit` passed in the last `window_s`.

        A refused request is not counted.
        """

    @abstractmethod
    async def refund(self, key: str, receipt: str) -> None:
        """Uncount the request that `hit` allowed with this receipt (it was not accepted after all).

        Check and count stay one atomic step, so the limit holds under concurrency; a request that
        fails after it was counted gives its place back here. An unknown or expired receipt is ignored.
        """
