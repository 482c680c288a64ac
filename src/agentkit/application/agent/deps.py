"""LoopDeps: what every execution of an AgentLoop shares, as one bundle the container builds once."""

import copy
from abc import abstractmethod
from typing import Protocol

from agentkit.application.agent.config import AgentConfig
from agentkit.application.agent.followers import FollowedRuns
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.backoff import RetryPacing
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.price_table import PriceTable
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader
from agentkit.application.tools.registry import ToolRegistry


class LoopDeps:
    """The ports, configuration and shared helpers every run's execution reads (and none writes).

    The one list of the loop's dependencies: the container builds it from its `__init__` (every
    parameter is a type the container provides), tests pass what they need by keyword, and an agent
    of the catalog runs on a copy with its own model, tools and configuration (`for_agent`).

    Attributes:
        llm: The model.
        tools: The registry of the tools every run may call.
        runs: Where runs are stored.
        pipeline: Where steps go: the durable trace (a run claims success only once it holds every
            step), the step observers (a live printer) and the run observers; with the policy of what
            the trace may keep of prompts.
        reader: Reads a run's stored steps back, to resume it where they end.
        sessions: Conversation memory.
        clock: Wall and monotonic time.
        config: The loop's limits and timings.
        leases: Renews the leases of the runs this process executes, and knows their cancels.
        pacing: How the writes a run's outcome depends on are retried through an outage.
        prices: What LLM calls cost; None: no price table (costs unknown).
    """

    __slots__ = (
        "clock",
        "config",
        "followed",
        "leases",
        "llm",
        "pacing",
        "pipeline",
        "prices",
        "reader",
        "runs",
        "sessions",
        "tools",
    )

    def __init__(
        self,
        *,
        llm: LLMClient,
        tools: ToolRegistry,
        runs: RunRepository,
        pipeline: StepPipeline,
        reader: TraceReader,
        sessions: SessionStore,
        clock: Clock,
        config: AgentConfig,
        leases: LeaseKeeper,
        pacing: RetryPacing,
        prices: PriceTable | None,
        followed: FollowedRuns,
    ) -> None:
        self.llm = llm
        self.tools = tools
        self.runs = runs
        self.pipeline = pipeline
        self.reader = reader
        self.sessions = sessions
        self.clock = clock
        self.config = config
        self.leases = leases
        self.pacing = pacing
        self.prices = prices
        self.followed = followed

    def for_agent(self, *, llm: LLMClient, tools: ToolRegistry, config: AgentConfig) -> "LoopDeps":
        """These dependencies with an agent's own model, tools and configuration.

        A shallow copy: the store, the pipeline, the sessions, the clock and above all the lease
        keeper stay shared by every agent of the process.
        """
        deps = copy.copy(self)
        deps.llm = llm
        deps.tools = tools
        deps.config = config
        return deps


class AgentChooser(Protocol):
    """Picks the dependencies of a run by its agent's name (the agent catalog)."""

    @abstractmethod
    def deps_for(self, base: LoopDeps, name: str) -> LoopDeps:
        """`base` with the model, tools and configuration of agent `name`."""

    @abstractmethod
    def version_of(self, name: str) -> str | None:
        """The version of agent `name` (a run that is handed to it records it)."""
