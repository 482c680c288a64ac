"""Failed API-key attempts, throttled per client address."""

import ipaddress
import time
from collections.abc import Callable

import structlog

from agentkit.application.errors import AuthThrottled
from agentkit.application.ports.rate_limiter import RateLimiter

logger = structlog.get_logger(__name__)

WINDOW_S = 60.0
MAX_BLOCKED = 100_000


class FailedKeyThrottle:
    """Counts failed API-key attempts per client address; past `limit_per_min`, the address gets 429.

    Rules:
    - Only failures are counted, so a client that sends a valid key never touches the limiter and is
      never throttled for its traffic.
    - Counted per client address, never per key: an attacker can throttle only the address it sends
      from, never lock a key out (clients sharing that address, behind one NAT, share its fate for at
      most a window).
    - A throttled address is refused before its key is even compared: answering a right key 200 while
      wrong ones get 429 would let the guessing go on at full speed, the status telling right from
      wrong. So an address has `limit_per_min` guesses a minute, whatever it sends.
    - Cheap: the count goes through the shared RateLimiter (one call per failure, so every process
      sees it), and each process remembers the addresses it has refused until their window frees a
      place, so a throttled address costs a dict lookup per request, not a round trip.

    Args:
        limit_per_min: Failed attempts an address may make in any 60 s.
        monotonic: The clock for this process's memory of throttled addresses.
    """

    def __init__(self, *, limit_per_min: int, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit_per_min
        self._monotonic = monotonic
        self._blocked_until: dict[str, float] = {}

    def check(self, address: str) -> None:
        """Refuse an address that is throttled now.

        Raises:
            AuthThrottled: the address made too many failed attempts; the error says for how long.
        """
        remaining = self._remaining(address)
        if remaining > 0:
            raise AuthThrottled(remaining)

    def throttled(self, address: str) -> bool:
        """Whether the address is refused now."""
        return self._remaining(address) > 0

    def _remaining(self, address: str) -> float:
        until = self._blocked_until.get(address)
        if until is None:
            return 0.0
        remaining = until - self._monotonic()
        if remaining <= 0:
            del self._blocked_until[address]
        return remaining

    async def failed(self, address: str, limiter: RateLimiter) -> None:
        """Count a failed attempt from `address`.

        Raises:
            AuthThrottled: it was one too many; the address is refused until a place frees up.
        """
        decision = await limiter.hit(f"auth-failures:{address}", limit=self._limit, window_s=WINDOW_S)
        if decision.allowed:
            return
        if address not in self._blocked_until:
            logger.warning("auth_throttled", client=address, retry_after_s=round(decision.retry_after_s, 1))
        self._block(address, self._monotonic() + decision.retry_after_s)
        raise AuthThrottled(decision.retry_after_s)

    def _block(self, address: str, until: float) -> None:
        if len(self._blocked_until) >= MAX_BLOCKED:
            # many addresses at once (a spread-out attack): forget the lapsed, then the oldest
            now = self._monotonic()
            self._blocked_until = {a: t for a, t in self._blocked_until.items() if t > now}
            while len(self._blocked_until) >= MAX_BLOCKED:
                del self._blocked_until[next(iter(self._blocked_until))]
        self._blocked_until[address] = until


def client_address(host: str | None) -> str:
    """The address failures are counted under: the ASGI client host, an IPv6 host by its /64.

    One machine usually holds a whole IPv6 /64, so counting single addresses would give it 2**64
    budgets. X-Forwarded-For is never read here: the server puts the proxy's word in the ASGI client
    only for the proxies in FORWARDED_ALLOW_IPS.
    """
    if not host:
        return "unknown"
    if ":" not in host:
        return host  # IPv4 (or a name): as it is, without parsing it on every request
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host  # a Unix socket or a test client: the name is all there is
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else ip)
