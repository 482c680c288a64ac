"""Is Redis answering?"""

from redis.asyncio import Redis

from agentkit.application.ports.health_probe import HealthProbe


class RedisProbe(HealthProbe):
    """`PING`."""

    name = "redis"

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def check(self) -> None:
        """Raise unless Redis answers."""
        await self._redis.ping()
