"""Health probes for whatever state servers the container connected to."""

from typing import NewType

from dishka import Provider, Scope, provide

from agentkit.adapters.postgres.probe import PostgresProbe
from agentkit.adapters.redis.probe import RedisProbe
from agentkit.application.ports.health_probe import HealthProbe
from agentkit.container.state import StateConnections

HealthProbes = NewType("HealthProbes", tuple[HealthProbe, ...])


class HealthProvider(Provider):
    """A probe per server in use (none when state is in memory)."""

    @provide(scope=Scope.APP)
    def probes(self, conns: StateConnections) -> HealthProbes:
        """Probes for the engine and the Redis client, when they exist."""
        probes: list[HealthProbe] = []
        if conns.engine is not None:
            probes.append(PostgresProbe(conns.engine))
        if conns.redis is not None:
            probes.append(RedisProbe(conns.redis))
        return HealthProbes(tuple(probes))
