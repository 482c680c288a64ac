"""Core providers: settings from the context, the clock, ids, the LLM, the loop, the scheduler, the use-cases."""

from collections.abc import AsyncIterator, Sequence
from typing import NewType

from dishka import Provider, Scope, decorate, from_context, provide

from agentkit.adapters.llm.factory import build_llm_client
from agentkit.adapters.scheduling import Recovery
from agentkit.adapters.system import SystemClock, UuidIdGenerator
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.agent.deps import LoopDeps
from agentkit.application.agent.followers import FollowedRuns
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.agents.catalog import AgentCatalog
from agentkit.application.agents.queries import AgentTools, ListAgents
from agentkit.application.backoff import RetryPacing
from agentkit.application.observation import RunObservers
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.callback_url_guard import CallbackURLGuard
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.id_generator import IdGenerator
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.prompt_reader import PromptReader
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_event_log import RunEventLog
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.runs.answer_run import AnswerRun
from agentkit.application.runs.cancel_run import CancelRun
from agentkit.application.runs.chat import ChatTurn
from agentkit.application.runs.create_run import CreateRun
from agentkit.application.runs.follow_run import FollowRun
from agentkit.application.runs.list_runs import ListRuns
from agentkit.application.runs.prune import PruneOldRuns
from agentkit.application.runs.queries import GetChildren, GetRun, GetRunTree, GetTrace
from agentkit.application.runs.recover_runs import lapse_grace_s
from agentkit.application.runs.run_agent import RunAgent, TreeWaiting
from agentkit.application.runs.run_tree import RunTree, TreeLimits
from agentkit.application.runs.submit_run import SubmitRun
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.application.sessions.manage import DeleteSession, GetSession
from agentkit.entrypoints.http.config import ApiConfig
from agentkit.entrypoints.wiring.providers.agents import CheckedAgents, agent_names_of, names_in
from agentkit.entrypoints.wiring.settings import Settings, metrics_address

StepObservers = NewType("StepObservers", tuple[TraceSink, ...])


def api_config_of(settings: Settings, agent_names: tuple[str, ...] | None = None) -> ApiConfig:
    """What the HTTP layer enforces, from the settings and the agents' names (read from AGENTS_FILE if not given)."""
    return ApiConfig(
        agent_names=agent_names_of(settings) if agent_names is None else agent_names,
        api_keys=settings.http.api_keys,
        auth_failures_per_min=settings.http.auth_failures_per_min,
        max_body_bytes=settings.http.max_body_bytes,
        max_goal_chars=settings.loop.max_goal_chars,
        response_timeout_s=settings.http.response_timeout_s,
        shutdown_grace_s=settings.loop.shutdown_grace_s,
        metrics_route=settings.observability.metrics_enabled and metrics_address(settings) is None,
        webhooks=settings.webhooks.webhook_secret is not None,
        a2a_v03=settings.http.a2a_v03_compat,
        # A2A's blocking send waits for the run's end or pause: its time limit bounds that (plus a margin
        # for the queue); never less than RESPONSE_TIMEOUT_S
        a2a_wait_s=max(settings.http.response_timeout_s, settings.loop.run_timeout_s + 30.0),
        cors_origins=settings.http.cors_origins,
    )


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
        client = build_llm_client(settings.llm)
        try:
            yield client
        finally:
            await client.aclose()

    @provide(scope=Scope.APP)
    def agent_config(self, settings: Settings) -> AgentConfig:
        """Loop limits from the settings."""
        loop = settings.loop
        return AgentConfig(
            repeat_limit=loop.max_repeated_calls,
            run_timeout_s=loop.run_timeout_s,
            lease_s=loop.run_lease_s,
            store_retry_s=loop.run_store_retry_s,
            approval_ttl_s=loop.approval_ttl_s,
            tool_concurrency=settings.tools.tool_concurrency,
        )

    @provide(scope=Scope.APP)
    def api_config(self, settings: Settings, agents: CheckedAgents) -> ApiConfig:
        """What the HTTP layer enforces (the agents' names from the file as it was read and checked once)."""
        return api_config_of(settings, names_in(agents.file))

    @provide(scope=Scope.APP)
    def leases(self, runs: RunRepository, clock: Clock, config: AgentConfig) -> LeaseKeeper:
        """One lease keeper for every run this process executes."""
        return LeaseKeeper(runs=runs, clock=clock, lease_s=config.lease_s)

    @provide(scope=Scope.APP)
    def followed(self, clock: Clock) -> FollowedRuns:
        """The runs someone watches (their LLM calls stream), as word of it reaches this process."""
        return FollowedRuns(clock)

    @provide(scope=Scope.APP)
    def pacing(self) -> RetryPacing:
        """Retries of a run's writes through an outage: real sleeps, the default backoff."""
        return RetryPacing()

    @provide(scope=Scope.APP)
    async def pipeline(
        self, trace: TraceSink, policy: PromptPolicy, observers: StepObservers, run_observers: RunObservers
    ) -> AsyncIterator[StepPipeline]:
        """The step pipeline: the durable trace, the step observers (the CLI's live output) and the run observers
        (the event log, webhooks, metrics, spans); it delivers what is queued on close, before they close."""
        pipeline = StepPipeline(
            trace=trace,
            policy=policy,
            step_observers=observers,
            run_observers=run_observers if run_observers.observers else None,
        )
        try:
            yield pipeline
        finally:
            await pipeline.aclose()

    loop_deps = provide(LoopDeps, scope=Scope.APP)

    @provide(scope=Scope.APP)
    def agent_loop(self, deps: LoopDeps, agents: AgentCatalog) -> AgentLoop:
        """The agent loop; each run with its agent's model and tools."""
        return AgentLoop(deps, agents=agents)

    @provide(scope=Scope.APP)
    def run_tree(self, runs: RunRepository, clock: Clock, settings: Settings, agents: AgentCatalog) -> RunTree:
        """The links between runs and their child runs (agents called as tools), with the tree's limits."""
        loop = settings.loop
        limits = TreeLimits(
            max_depth=loop.agent_tree_max_depth,
            max_steps=loop.max_steps,
            token_budget=loop.run_token_budget,
            max_goal_chars=loop.max_goal_chars,
            pending_lease_s=loop.run_lease_s,
            recheck_s=loop.run_lease_s,
        )
        return RunTree(runs=runs, clock=clock, agents=agents, limits=limits)

    @provide(scope=Scope.APP)
    def recovery(self, runs: RunRepository, clock: Clock, settings: Settings, tree: RunTree) -> Recovery:
        """How the scheduler's sweeper resumes lapsed runs: every half lease, MAX_RUN_ATTEMPTS claims at most."""
        loop = settings.loop
        return Recovery(
            runs=runs,
            clock=clock,
            max_attempts=loop.max_run_attempts,
            interval_s=loop.run_lease_s / 2,
            grace_s=lapse_grace_s(loop.run_lease_s),
            tree=tree,
        )

    @provide(scope=Scope.REQUEST)
    def create_run(
        self,
        runs: RunRepository,
        clock: Clock,
        ids: IdGenerator,
        settings: Settings,
        agents: AgentCatalog,
        callbacks: CallbackURLGuard | None,
    ) -> CreateRun:
        """The CreateRun use-case (each run's limits its agent's; callback URLs checked when webhooks are on)."""
        loop = settings.loop
        return CreateRun(
            runs=runs,
            clock=clock,
            ids=ids,
            max_steps=loop.max_steps,
            max_goal_chars=loop.max_goal_chars,
            pending_lease_s=loop.run_lease_s,
            token_budget=loop.run_token_budget,
            agents=agents,
            callbacks=callbacks,
        )

    @provide(scope=Scope.REQUEST)
    def submit_run(
        self,
        create: CreateRun,
        scheduler: RunScheduler,
        admission: RunAdmission,
        runs: RunRepository,
        events: RunEvents,
        clock: Clock,
        limiter: RateLimiter,
        settings: Settings,
    ) -> SubmitRun:
        """The SubmitRun use-case, with the cap on runs in flight and the per-key rate limit."""
        return SubmitRun(
            create=create,
            scheduler=scheduler,
            admission=admission,
            runs=runs,
            events=events,
            clock=clock,
            limiter=limiter,
            limit_per_min=settings.http.rate_limit_per_min,
        )

    @provide(scope=Scope.REQUEST)
    def wait_for_run(self, runs: RunRepository, events: RunEvents, scheduler: RunScheduler, clock: Clock) -> WaitForRun:
        """The WaitForRun use-case (long-poll)."""
        return WaitForRun(runs=runs, events=events, scheduler=scheduler, clock=clock)

    @provide(scope=Scope.REQUEST)
    def get_trace(self, runs: RunRepository, trace: TraceReader, prompts: PromptReader) -> GetTrace:
        """The GetTrace use-case."""
        return GetTrace(runs=runs, trace=trace, prompts=prompts)

    @provide(scope=Scope.REQUEST)
    def follow_run(
        self,
        runs: RunRepository,
        log: RunEventLog,
        scheduler: RunScheduler,
        settings: Settings,
        events: RunEvents,
        clock: Clock,
    ) -> FollowRun:
        """The FollowRun use-case (GET /v1/runs/{id}/events), a keep-alive due every SSE_KEEPALIVE_S; followers
        say they follow, so the run's model answers stream."""
        return FollowRun(
            runs=runs, log=log, scheduler=scheduler, idle_s=settings.http.sse_keepalive_s, events=events, clock=clock
        )

    @provide(scope=Scope.REQUEST)
    def run_agent(
        self,
        create: CreateRun,
        loop: AgentLoop,
        tree: RunTree,
        scheduler: RunScheduler,
        runs: RunRepository,
        events: RunEvents,
        clock: Clock,
        settings: Settings,
    ) -> RunAgent:
        """The RunAgent use-case (CLI, MCP server): a run that calls other agents is awaited through its tree."""
        loop_settings = settings.loop
        waiting = TreeWaiting(
            tree=tree,
            scheduler=scheduler,
            runs=runs,
            events=events,
            clock=clock,
            wait_s=loop_settings.run_timeout_s * (loop_settings.agent_tree_max_depth + 1),
        )
        return RunAgent(create=create, loop=loop, waiting=waiting)

    chat_turn = provide(ChatTurn, scope=Scope.REQUEST)
    list_agents = provide(ListAgents, scope=Scope.REQUEST)
    agent_tools = provide(AgentTools, scope=Scope.REQUEST)

    @provide(scope=Scope.REQUEST)
    def cancel_run(self, runs: RunRepository, clock: Clock, scheduler: RunScheduler, tree: RunTree) -> CancelRun:
        """The CancelRun use-case; a cancel cascades to a run's child runs."""
        return CancelRun(runs=runs, clock=clock, scheduler=scheduler, tree=tree)

    answer_run = provide(AnswerRun, scope=Scope.REQUEST)
    get_run = provide(GetRun, scope=Scope.REQUEST)
    get_children = provide(GetChildren, scope=Scope.REQUEST)
    get_run_tree = provide(GetRunTree, scope=Scope.REQUEST)
    list_runs = provide(ListRuns, scope=Scope.REQUEST)
    get_session = provide(GetSession, scope=Scope.REQUEST)
    delete_session = provide(DeleteSession, scope=Scope.REQUEST)
    prune_runs = provide(PruneOldRuns, scope=Scope.REQUEST)


class BuiltLLMProvider(Provider):
    """An LLM client built before the container (so its settings are checked first); its builder closes it."""

    def __init__(self, llm: LLMClient) -> None:
        super().__init__()
        self.provide(lambda: llm, provides=LLMClient, scope=Scope.APP)


class ObserversProvider(Provider):
    """Extra trace sinks that see every step as it happens (none by default)."""

    def __init__(self, observers: Sequence[TraceSink] = ()) -> None:
        super().__init__()
        self._observers = StepObservers(tuple(observers))

    @provide(scope=Scope.APP)
    def observers(self) -> StepObservers:
        """The observers given."""
        return self._observers


class RunPrintersProvider(Provider):
    """Run observers a command adds after the service's own (the terminal printer of `agentkit run`, which
    shows a streamed run's fragments as they come, and its steps in order with them)."""

    def __init__(self, observers: Sequence[RunObserver]) -> None:
        super().__init__()
        self._observers = tuple(observers)

    @decorate
    def with_printers(self, observers: RunObservers) -> RunObservers:
        """The run observers, then the command's."""
        return RunObservers([*observers.observers, *self._observers])
