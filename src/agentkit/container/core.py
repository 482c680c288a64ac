"""Core providers: settings, clock, ids, the LLM, the tool registry and the use-cases."""

from collections.abc import AsyncIterator, Sequence
from typing import Any, NewType

from dishka import AnyOf, AsyncContainer, Provider, Scope, from_context, make_async_container, provide

from agentkit.adapters.llm.factory import build_llm_client
from agentkit.adapters.scheduling import InlineRunScheduler
from agentkit.adapters.system import SystemClock, UuidIdGenerator
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.errors import ConfigurationError
from agentkit.application.health import CheckHealth
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.id_generator import IdGenerator
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.runs.cancel_run import CancelRun
from agentkit.application.runs.create_run import CreateRun
from agentkit.application.runs.expire_runs import ExpireLapsedRuns
from agentkit.application.runs.prune import PruneOldRuns
from agentkit.application.runs.queries import GetRun, GetTrace
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.runs.submit_run import SubmitRun
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.application.settings import Settings, runs_in_flight_cap
from agentkit.application.tools.discovery import (
    context_providers_in,
    import_tool_modules,
    load_entry_points,
    tools_in,
)
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.tool import Tool
from agentkit.container.health import HealthProbes, HealthProvider
from agentkit.container.state import StateProvider
from agentkit.container.tools import BuiltinTools, ToolsProvider

StepObservers = NewType("StepObservers", tuple[TraceSink, ...])


class CoreProvider(Provider):
    """Settings from the container's context; everything else built from them."""

    settings = from_context(provides=Settings, scope=Scope.APP)

    @provide(scope=Scope.APP)
    def clock(self) -> Clock:
        """The system clock."""
        return SystemClock()

    @provide(scope=Scope.APP)
    def ids(self) -> IdGenerator:
        """Random run ids."""
        return UuidIdGenerator()

    @provide(scope=Scope.APP)
    async def llm(self, settings: Settings) -> AsyncIterator[LLMClient]:
        """The provider named by LLM_PROVIDER (wrapped in the retry policy), closed with the container."""
        client = build_llm_client(settings)
        try:
            yield client
        finally:
            await client.aclose()

    @provide(scope=Scope.APP)
    def agent_config(self, settings: Settings) -> AgentConfig:
        """Loop limits from the settings."""
        return AgentConfig(
            max_steps=settings.max_steps,
            repeat_limit=settings.max_repeated_calls,
            run_timeout_s=settings.run_timeout_s,
            lease_s=settings.run_lease_s,
            store_retry_s=settings.run_store_retry_s,
        )

    @provide(scope=Scope.APP)
    def registry(self, settings: Settings, builtin: BuiltinTools) -> ToolRegistry:
        """Built-in tools, then AGENTKIT_TOOL_MODULES, then the `agentkit.tools` entry points.

        Their context providers come along, so a tool asking for a ToolContext subclass is served
        (and one whose context nobody supplies is refused here, at start-up).
        """
        offered = [*import_tool_modules(settings.agentkit_tool_modules), *load_entry_points()]
        tools: list[Tool[..., Any]] = [*builtin, *(item for obj in offered for item in tools_in(obj))]
        return ToolRegistry(
            tools,
            default_timeout_s=settings.tool_timeout_s,
            output_max_chars=settings.tool_output_max_chars,
            context_providers=[provider for obj in offered for provider in context_providers_in(obj)],
        )

    @provide(scope=Scope.REQUEST)
    def create_run(self, runs: RunRepository, clock: Clock, ids: IdGenerator, settings: Settings) -> CreateRun:
        """The CreateRun use-case."""
        return CreateRun(
            runs=runs,
            clock=clock,
            ids=ids,
            max_steps=settings.max_steps,
            max_goal_chars=settings.max_goal_chars,
            pending_lease_s=settings.run_lease_s,
            token_budget=settings.run_token_budget,
        )

    @provide(scope=Scope.APP)
    def agent_loop(
        self,
        llm: LLMClient,
        registry: ToolRegistry,
        runs: RunRepository,
        trace: TraceSink,
        sessions: SessionStore,
        clock: Clock,
        config: AgentConfig,
        observers: StepObservers,
    ) -> AgentLoop:
        """The agent loop with its observers (the CLI's live output)."""
        return AgentLoop(
            llm=llm,
            tools=registry,
            runs=runs,
            trace=trace,
            sessions=sessions,
            clock=clock,
            config=config,
            observers=observers,
        )

    @provide(scope=Scope.APP, provides=AnyOf[RunScheduler, RunAdmission])
    def scheduler(self, loop: AgentLoop, settings: Settings) -> InlineRunScheduler:
        """Where accepted runs execute (RUN_MODE); inline: tasks of this process, which also count them."""
        if settings.run_mode != "inline":
            raise ConfigurationError("RUN_MODE: only 'inline' is available in this version")
        return InlineRunScheduler(loop, max_in_flight=runs_in_flight_cap(settings))

    @provide(scope=Scope.REQUEST)
    def submit_run(
        self,
        create: CreateRun,
        scheduler: RunScheduler,
        admission: RunAdmission,
        runs: RunRepository,
        limiter: RateLimiter,
        settings: Settings,
    ) -> SubmitRun:
        """The SubmitRun use-case, with the cap on runs in flight and the per-key rate limit."""
        return SubmitRun(
            create=create,
            scheduler=scheduler,
            admission=admission,
            runs=runs,
            limiter=limiter,
            limit_per_min=settings.rate_limit_per_min,
        )

    @provide(scope=Scope.APP)
    def check_health(self, probes: HealthProbes) -> CheckHealth:
        """Health checks over the state probes."""
        return CheckHealth(probes=probes)

    run_agent = provide(RunAgent, scope=Scope.REQUEST)
    cancel_run = provide(CancelRun, scope=Scope.REQUEST)
    get_run = provide(GetRun, scope=Scope.REQUEST)

    @provide(scope=Scope.REQUEST)
    def wait_for_run(self, runs: RunRepository, scheduler: RunScheduler, clock: Clock) -> WaitForRun:
        """The WaitForRun use-case (long-poll)."""
        return WaitForRun(runs=runs, scheduler=scheduler, clock=clock)

    expire_runs = provide(ExpireLapsedRuns, scope=Scope.REQUEST)
    prune_runs = provide(PruneOldRuns, scope=Scope.REQUEST)

    @provide(scope=Scope.REQUEST)
    def get_trace(self, runs: RunRepository, trace: TraceReader) -> GetTrace:
        """The GetTrace use-case."""
        return GetTrace(runs=runs, trace=trace)


class ObserversProvider(Provider):
    """Extra trace sinks that see every step as it happens (none by default)."""

    def __init__(self, observers: Sequence[TraceSink] = ()) -> None:
        super().__init__()
        self._observers = StepObservers(tuple(observers))

    @provide(scope=Scope.APP)
    def observers(self) -> StepObservers:
        """The observers given."""
        return self._observers


def make_container(settings: Settings, *overrides: Provider) -> AsyncContainer:
    """Build the container for these settings; providers in `overrides` replace the defaults."""
    return make_async_container(
        CoreProvider(),
        StateProvider(),
        HealthProvider(),
        ToolsProvider(),
        ObserversProvider(),
        *overrides,
        context={Settings: settings},
    )
