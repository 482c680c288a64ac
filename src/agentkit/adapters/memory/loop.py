"""The loop's dependencies on in-memory adapters: for tests, benchmarks and one-off scripts.

The service and the library build `LoopDeps` in the container; this fills in what a test does not
care about (a fixed clock, stores in memory, a pipeline with no observers) and takes what it does.
"""

from collections.abc import Sequence
from typing import cast

from agentkit.adapters.memory.clock import FixedClock
from agentkit.adapters.memory.runs import InMemoryRunRepository
from agentkit.adapters.memory.sessions import InMemorySessionStore
from agentkit.adapters.memory.trace import InMemoryTraceSink
from agentkit.application.agent.config import AgentConfig
from agentkit.application.agent.deps import LoopDeps
from agentkit.application.agent.followers import FollowedRuns
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.backoff import RetryPacing
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.price_table import PriceTable
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.tools.registry import ToolRegistry


def memory_loop_deps(
    llm: LLMClient,
    tools: ToolRegistry | None = None,
    *,
    runs: RunRepository | None = None,
    trace: TraceSink | None = None,
    reader: TraceReader | None = None,
    sessions: SessionStore | None = None,
    clock: Clock | None = None,
    config: AgentConfig | None = None,
    observers: Sequence[TraceSink] = (),
    run_observers: RunObserver | None = None,
    policy: PromptPolicy | None = None,
    pacing: RetryPacing | None = None,
    prices: PriceTable | None = None,
    pipeline: StepPipeline | None = None,
) -> LoopDeps:
    """LoopDeps on in-memory adapters, but for those given.

    `trace` is the durable sink (an `InMemoryTraceSink` by default); it is also the `reader` unless
    one is given. A `pipeline` given (one a run repository already feeds, say) is used as
    it is: its own trace, observers and policy, not the ones above.
    """
    clock = FixedClock() if clock is None else clock
    runs = InMemoryRunRepository() if runs is None else runs
    config = AgentConfig() if config is None else config
    if pipeline is not None:
        trace = pipeline.trace
    if trace is None:
        trace = InMemoryTraceSink()
    if reader is None:
        if not hasattr(trace, "steps"):
            raise TypeError("the loop needs a TraceReader (or a trace sink that reads its steps back)")
        reader = cast(TraceReader, trace)
    return LoopDeps(
        llm=llm,
        tools=ToolRegistry() if tools is None else tools,
        runs=runs,
        pipeline=pipeline
        or StepPipeline(trace=trace, policy=policy, step_observers=observers, run_observers=run_observers),
        reader=reader,
        sessions=InMemorySessionStore(clock) if sessions is None else sessions,
        clock=clock,
        config=config,
        leases=LeaseKeeper(runs=runs, clock=clock, lease_s=config.lease_s),
        pacing=RetryPacing() if pacing is None else pacing,
        prices=prices,
        followed=FollowedRuns(clock),
    )
