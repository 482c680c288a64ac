"""Health probes for the servers in use, each on a connection of its own."""

from collections.abc import AsyncIterator

from dishka import Provider, Scope, provide

from agentkit.adapters.postgres.probe import PostgresProbe
from agentkit.adapters.postgres.schema import SchemaRevisions
from agentkit.adapters.redis.probe import RedisProbe
from agentkit.application.health import CheckHealth, HealthProbes
from agentkit.entrypoints.wiring.settings import Settings
from agentkit.entrypoints.wiring.startup import StateEndpoints


class HealthProvider(Provider):
    """A probe per server in use (none when state is in memory), and the CheckHealth use-case over them."""

    scope = Scope.APP

    @provide
    async def probes(self, endpoints: StateEndpoints, settings: Settings) -> AsyncIterator[HealthProbes]:
        """Probes for the database (answering, with this release's schema) and Redis, when they are used; their
        connections close with the container."""
        url, redis_url = endpoints.database_url, endpoints.redis_url
        postgres = PostgresProbe(url, revisions=SchemaRevisions()) if url is not None else None
        redis = RedisProbe(redis_url, password=settings.state.redis_password) if redis_url is not None else None
        try:
            yield HealthProbes(tuple(probe for probe in (postgres, redis) if probe is not None))
        finally:
            if redis is not None:
                await redis.aclose()
            if postgres is not None:
                await postgres.aclose()

    @provide
    def check_health(self, probes: HealthProbes) -> CheckHealth:
        """Health checks over the probes."""
        return CheckHealth(probes=probes)
