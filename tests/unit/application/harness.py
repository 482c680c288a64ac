"""A loop wired to in-memory adapters and a scripted LLM, for the loop's tests."""

from collections.abc import Sequence
from typing import Any

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunEvents,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.scheduling import InlineRunScheduler
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.backoff import Backoff, RetryPacing, Sleep
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.price_table import PriceTable
from agentkit.application.ports.tool_sandbox import ToolSandbox
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.application.runs.cancel_run import CancelRun
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import Tool, ToolRegistry
from agentkit.application.tools.slots import CallSlots
from agentkit.domain.ids import OwnerId, SessionId, ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from agentkit.domain.run import Run
from agentkit.domain.steps import Step

OWNER = OwnerId("owner-1")


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCall:
    """A tool call as a provider would send it."""
    return ToolCall(id=ToolCallId(call_id), name=name, arguments=arguments)


def calls(*tool_calls: ToolCall, tokens: int = 10) -> LLMResponse:
    """A model turn that calls tools."""
    return LLMResponse(tool_calls=tool_calls, usage=Usage(input_tokens=tokens, output_tokens=tokens // 2))


def answer(text: str, tokens: int = 10) -> LLMResponse:
    """A model turn that answers."""
    return LLMResponse(text=text, usage=Usage(input_tokens=tokens, output_tokens=tokens // 2))


class Harness:
    """Everything a loop test needs, in memory."""

    def __init__(
        self,
        script: Sequence[LLMResponse],
        tools: Sequence[Tool[..., Any]] = (),
        *,
        config: AgentConfig | None = None,
        trace: TraceSink | None = None,
        observers: Sequence[TraceSink] | None = None,
        tool_timeout_s: float = 5.0,
        token_budget: int | None = None,
        runs: InMemoryRunRepository | None = None,
        max_steps: int = 10,
        clock: FixedClock | None = None,
        sleep: Sleep | None = None,
        backoff: Backoff | None = None,
        prompt_policy: PromptPolicy | None = None,
        prices: PriceTable | None = None,
        sandbox: ToolSandbox | None = None,
        slots: CallSlots | None = None,
    ) -> None:
        self.clock = clock or FixedClock()
        self.runs = runs or InMemoryRunRepository()
        self.store = InMemoryTraceSink()
        self.sessions = InMemorySessionStore(self.clock, max_messages=50)
        self.llm = ScriptedLLMClient(script)
        self.registry = ToolRegistry(
            tools, default_timeout_s=tool_timeout_s, output_max_chars=200, sandbox=sandbox, slots=slots
        )
        self.config = config or AgentConfig()
        self.loop = AgentLoop(
            memory_loop_deps(
                self.llm,
                self.registry,
                runs=self.runs,
                trace=trace or self.store,
                reader=self.store,
                sessions=self.sessions,
                clock=self.clock,
                config=self.config,
                observers=observers if observers is not None else [self.store] if trace is not None else [],
                pacing=RetryPacing(sleep=sleep, backoff=backoff),
                policy=prompt_policy,
                prices=prices,
            )
        )
        self.create = CreateRun(
            runs=self.runs,
            clock=self.clock,
            ids=SequentialIdGenerator(),
            max_steps=max_steps,
            max_goal_chars=1000,
            token_budget=token_budget,
        )
        self.events = InMemoryRunEvents()
        self.scheduler = InlineRunScheduler(self.loop, events=self.events)
        self.cancel = CancelRun(runs=self.runs, clock=self.clock, scheduler=self.scheduler)

    async def run(self, goal: str = "do it", *, session: str | None = None, **extra: Any) -> Run:
        """Create and execute a run."""
        agent = RunAgent(create=self.create, loop=self.loop)
        inp = CreateRunInput(owner=OWNER, goal=goal, session_id=SessionId(session) if session else None, **extra)
        return await agent.execute(inp)

    async def steps(self, run: Run) -> list[Step]:
        """The run's recorded steps."""
        return await self.store.steps(run.id)
