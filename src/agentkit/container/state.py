"""State adapters chosen from the settings (in-memory until the Postgres/Redis adapters are wired)."""

from dishka import Provider, Scope, provide

from agentkit.adapters.memory import InMemoryRateLimiter, InMemoryRunRepository, InMemorySessionStore, InMemoryTraceSink
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.settings import Settings


class StateProvider(Provider):
    """Runs, traces, sessions and rate limits."""

    runs = provide(InMemoryRunRepository, scope=Scope.APP, provides=RunRepository)

    @provide(scope=Scope.APP)
    def trace_store(self) -> InMemoryTraceSink:
        """One in-memory trace store, behind both trace ports."""
        return InMemoryTraceSink()

    @provide(scope=Scope.APP)
    def trace_sink(self, store: InMemoryTraceSink) -> TraceSink:
        """The store as a sink."""
        return store

    @provide(scope=Scope.APP)
    def trace_reader(self, store: InMemoryTraceSink) -> TraceReader:
        """The store as a reader."""
        return store

    @provide(scope=Scope.APP)
    def sessions(self, clock: Clock, settings: Settings) -> SessionStore:
        """Sessions in memory."""
        return InMemorySessionStore(clock, ttl_s=settings.session_ttl_s, max_messages=settings.session_max_messages)

    @provide(scope=Scope.APP)
    def rate_limiter(self, clock: Clock) -> RateLimiter:
        """Rate limits in memory."""
        return InMemoryRateLimiter(clock)
