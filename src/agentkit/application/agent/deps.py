"""LoopDeps: what every execution of an AgentLoop shares, as one plain bundle."""

import asyncio
from abc import abstractmethod
from collections.abc import Sequence
from typing import Protocol, cast

from agentkit.application.agent.config import AgentConfig
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.agent.prompts import PromptPolicy
from agentkit.application.backoff import Backoff, Sleep
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.price_table import PriceTable
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.tools.registry import ToolRegistry


class LoopDeps:
    """The ports, configuration and shared helpers every run's execution reads (and none writes).

    Attributes:
        llm: The model.
        tools: The registry of the tools every run may call.
        runs: Where runs are stored.
        trace: The durable trace sink: a run claims success only once it holds every step.
        reader: Reads a run's stored steps back, to resume it where they end.
        observers: Sinks that see each step as it happens (the CLI's live output); their failures
            are logged and cost the run nothing.
        sessions: Conversation memory.
        clock: Wall and monotonic time.
        config: The loop's limits and timings.
        leases: Renews the leases of the runs this process executes, and knows their cancels.
        sleep: Paces the store retries through an outage (tests pass a fake that moves a clock).
        backoff: How long those retries wait.
        prompt_policy: What of each LLM call's prompt the trace stores (payloads, redactions, secrets).
        prices: What LLM calls cost; None: no price table (costs unknown).
    """

    __slots__ = (
        "backoff",
        "clock",
        "config",
        "leases",
        "llm",
        "observers",
        "prices",
        "prompt_policy",
        "reader",
        "runs",
        "sessions",
        "sleep",
        "tools",
        "trace",
    )

    def __init__(
        self,
        *,
        llm: LLMClient,
        tools: ToolRegistry,
        runs: RunRepository,
        trace: TraceSink,
        sessions: SessionStore,
        clock: Clock,
        config: AgentConfig,
        reader: TraceReader | None = None,
        observers: Sequence[TraceSink] = (),
        sleep: Sleep = asyncio.sleep,
        backoff: Backoff | None = None,
        prompt_policy: PromptPolicy | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if reader is None:
            if not hasattr(trace, "steps"):
                raise TypeError("the loop needs a TraceReader (or a trace sink that reads its steps back)")
            reader = cast(TraceReader, trace)
        self.reader = reader
        self.llm = llm
        self.prompt_policy = prompt_policy or PromptPolicy()
        self.prices = prices
        self.tools = tools
        self.runs = runs
        self.trace = trace
        self.observers = tuple(observers)
        self.sessions = sessions
        self.clock = clock
        self.config = config
        self.sleep = sleep
        self.backoff = backoff or Backoff()
        # `sleep` paces the store retries only; leases keep real time (a lease is a promise to other processes)
        self.leases = LeaseKeeper(runs=runs, clock=clock, lease_s=config.lease_s)


class AgentChooser(Protocol):
    """Picks the dependencies of a run by its agent's name (the agent catalog)."""

    @abstractmethod
    def deps_for(self, base: LoopDeps, name: str) -> LoopDeps:
        """`base` with the model, tools and configuration of agent `name`."""
