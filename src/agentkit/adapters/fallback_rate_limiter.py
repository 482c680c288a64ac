"""A RateLimiter on a shared store (Redis) that falls back to a per-process window while the store is down."""

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import msgspec
import structlog

from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.rate_limiter import RateDecision, RateLimiter

logger = structlog.get_logger(__name__)

T = TypeVar("T")
_PRIMARY, _FALLBACK = "p:", "f:"


class FallbackRateLimiter(RateLimiter):
    """The shared limiter while it answers; a per-process one while it does not.

    Refusing every request because the limiter's store is down turns a Redis outage into an outage
    of run creation; letting everything through drops the limit. In between, each process keeps its
    own window during an outage: the limit holds per process (N processes allow up to N times it),
    and nothing is refused for want of Redis.

    Rules:
    - An outage is a StoreUnavailable from the primary, or a call slower than `timeout_s` (a frozen
      server answers nothing; without the bound every request would wait for it).
    - It is logged once when it starts (warning) and once when the primary answers again, never per request.
    - While it lasts, requests go straight to the fallback, and one request every `probe_interval_s`
      tries the primary instead; the first that succeeds ends the outage.
    - A receipt names the limiter that counted the request, so its refund goes to the same one. The
      two keep their own counts: the fallback starts empty, and what it counted is not carried back.

    Args:
        primary: The shared limiter (Redis).
        fallback: The per-process limiter (memory).
        clock: Times the probes.
        store: The primary's store, as logs should name it.
        timeout_s: A primary call that takes longer counts as an outage.
        probe_interval_s: How long an outage sends everything to the fallback before trying the primary.
    """

    def __init__(
        self,
        primary: RateLimiter,
        fallback: RateLimiter,
        *,
        clock: Clock,
        store: str = "Redis",
        timeout_s: float = 1.0,
        probe_interval_s: float = 1.0,
    ) -> None:
        self._primary = primary
        self._fallback = fallback
        self._clock = clock
        self._store = store
        self._timeout_s = timeout_s
        self._probe_interval_s = probe_interval_s
        self._down_since: float | None = None
        self._next_probe = 0.0

    async def hit(self, key: str, *, limit: int, window_s: float) -> RateDecision:
        """Count on the primary if it answers, else on the fallback."""
        if self._primary_turn():
            try:
                decision = await self._bounded(self._primary.hit(key, limit=limit, window_s=window_s))
            except StoreUnavailable as exc:
                self._went_down(exc)
            else:
                self._came_back()
                return _tagged(decision, _PRIMARY)
        return _tagged(await self._fallback.hit(key, limit=limit, window_s=window_s), _FALLBACK)

    async def refund(self, key: str, receipt: str) -> None:
        """Refund on the limiter that counted the request; a primary that is down keeps its count."""
        if receipt.startswith(_FALLBACK):
            await self._fallback.refund(key, receipt.removeprefix(_FALLBACK))
        elif receipt.startswith(_PRIMARY) and self._primary_turn():
            try:
                await self._bounded(self._primary.refund(key, receipt.removeprefix(_PRIMARY)))
            except StoreUnavailable as exc:
                self._went_down(exc)  # the place stays taken until the window slides: errs toward the limit
            else:
                self._came_back()

    def _primary_turn(self) -> bool:
        if self._down_since is None:
            return True
        now = self._clock.monotonic()
        if now < self._next_probe:
            return False
        self._next_probe = now + self._probe_interval_s  # this request probes; the others keep to the fallback
        return True

    async def _bounded(self, call: Awaitable[T]) -> T:
        try:
            async with asyncio.timeout(self._timeout_s):
                return await call
        except TimeoutError:
            raise StoreUnavailable(f"{self._store} did not answer within {self._timeout_s:g} s") from None

    def _went_down(self, exc: StoreUnavailable) -> None:
        now = self._clock.monotonic()
        self._next_probe = now + self._probe_interval_s
        if self._down_since is None:
            self._down_since = now
            logger.warning("rate_limiter_fallback", store=self._store, error=str(exc), scope="per process")

    def _came_back(self) -> None:
        if self._down_since is not None:
            outage_s = self._clock.monotonic() - self._down_since
            self._down_since = None
            logger.info("rate_limiter_recovered", store=self._store, outage_s=round(outage_s, 3))


def _tagged(decision: RateDecision, origin: str) -> RateDecision:
    if decision.receipt is None:
        return decision
    return msgspec.structs.replace(decision, receipt=origin + decision.receipt)
