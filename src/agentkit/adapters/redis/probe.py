"""Is Redis answering?"""

from agentkit.adapters.redis.client import create_redis
from agentkit.application.ports.health_probe import HealthProbe


class RedisProbe(HealthProbe):
    """`PING` on a client of the probe's own.

    Not on the service's pool: under load, or with Redis frozen, its connections may all be busy or
    stuck, and a probe queued behind them would miss /health's bound.

    Args:
        url: Where Redis is.
        password: Used when the URL has none.
        timeout_s: The bound on connecting, waiting for a connection and the reply.
    """

    name = "redis"

    def __init__(self, url: str, *, password: str | None = None, timeout_s: float = 1.5) -> None:
        self._redis = create_redis(
            url,
            password=password,
            socket_timeout_s=timeout_s,
            connect_timeout_s=timeout_s,
            max_connections=2,
            pool_timeout_s=timeout_s,
        )

    async def check(self) -> None:
        """Raise unless Redis answers."""
        await self._redis.ping()

    async def aclose(self) -> None:
        """Close the probe's connections."""
        await self._redis.aclose()
