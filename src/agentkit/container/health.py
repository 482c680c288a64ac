"""Health probes for whatever state servers the container connected to."""

from collections.abc import AsyncIterator
from typing import NewType

from dishka import Provider, Scope, provide

from agentkit.adapters.postgres.probe import PostgresProbe
from agentkit.adapters.redis.probe import RedisProbe
from agentkit.application.ports.health_probe import HealthProbe
from agentkit.application.settings import Settings
from agentkit.container.state import StateConnections

HealthProbes = NewType("HealthProbes", tuple[HealthProbe, ...])


class HealthProvider(Provider):
    """A probe per server in use (none when state is in memory), each on a connection of its own."""

    @provide(scope=Scope.APP)
    async def probes(self, conns: StateConnections, settings: Settings) -> AsyncIterator[HealthProbes]:
        """Probes for the database and Redis, when they are used; their connections close with the container."""
        postgres = PostgresProbe(conns.engine.url) if conns.engine is not None else None
        redis = RedisProbe(conns.redis_url, password=settings.redis_password) if conns.redis_url is not None else None
        try:
            yield HealthProbes(tuple(probe for probe in (postgres, redis) if probe is not None))
        finally:
            if redis is not None:
                await redis.aclose()
            if postgres is not None:
                await postgres.aclose()
