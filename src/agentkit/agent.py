"""`Agent`: AgentKit from Python, in one process, with state in memory.

agent = Agent(llm=ScriptedLLMClient([...]), tools=[add])
result = await agent.run("what is 2+3?")
print(result.answer, [step.step_no for step in result.steps])
"""

from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Generic, Self, TypeVar, overload

import msgspec
from dishka import AsyncContainer

from agentkit.adapters.memory import InMemoryRunRepository
from agentkit.application.agent import DEFAULT_SYSTEM_PROMPT
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools.context import ContextProvider
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.schema import inline_refs
from agentkit.application.tools.tool import Tool
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import Step
from agentkit.entrypoints.wiring.library import library_container

T = TypeVar("T")
LOCAL = OwnerId("local")


class AgentResult(msgspec.Struct, Generic[T], frozen=True, kw_only=True):
    """A finished run and its trace.

    Attributes:
        run: The run in its terminal status (answer, failure reason, token totals).
        steps: Every LLM call and tool call, in order.
        output: The typed final output, when `run` was given an `output` type.
    """

    run: Run
    steps: list[Step]
    output: T | None = None

    @property
    def ok(self) -> bool:
        """Whether the run succeeded."""
        return self.run.status is RunStatus.SUCCEEDED

    @property
    def answer(self) -> str | None:
        """The final answer text."""
        return self.run.answer


class Agent:
    """An agent over these tools and this LLM, with runs, traces and sessions in memory.

    A run's result (the run and its steps) is handed back by `run` and then forgotten: one Agent can
    serve any number of runs in bounded memory. `keep_runs` keeps that many of the latest ended runs
    for inspection (`recent`). Sessions are kept (SESSION_TTL_S, trimmed to their last messages).
    Use it as an async context manager, or call `aclose`, to stop its background work when done.

    Args:
        llm: Any LLMClient: a provider adapter, or `ScriptedLLMClient` for tests and demos.
        tools: The `@tool` functions it may call.
        system_prompt: The instructions every run starts with.
        max_steps: LLM turns a run may take.
        run_timeout_s: Wall time a run may take.
        tool_timeout_s: The limit for tools that set none.
        token_budget: Tokens a run may spend, if limited.
        observers: Trace sinks that see every step as it happens (a live printer, say).
        context_providers: `@context_provider` functions supplying the ToolContext subclasses the
            tools ask for.
        keep_runs: Ended runs kept for `recent` (0: none; each run is forgotten once returned).
    """

    def __init__(
        self,
        *,
        llm: LLMClient,
        tools: Iterable[Tool[..., Any]] = (),
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        max_steps: int = 10,
        run_timeout_s: float = 120.0,
        tool_timeout_s: float = 30.0,
        token_budget: int | None = None,
        observers: Sequence[TraceSink] = (),
        context_providers: Iterable[ContextProvider[Any]] = (),
        keep_runs: int = 0,
    ) -> None:
        if keep_runs < 0:
            raise ValueError("keep_runs: expected 0 or more")
        self.registry = ToolRegistry(tools, default_timeout_s=tool_timeout_s, context_providers=context_providers)
        self._keep_runs = keep_runs
        self._container: AsyncContainer = library_container(
            llm=llm,
            registry=self.registry,
            system_prompt=system_prompt,
            max_steps=max_steps,
            run_timeout_s=run_timeout_s,
            tool_timeout_s=tool_timeout_s,
            token_budget=token_budget,
            observers=observers,
            keep_runs=keep_runs,
        )
        self._parts: _Parts | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Finish what is queued (the step observers' last steps) and stop the background work."""
        parts, self._parts = self._parts, None
        if parts is not None:
            await parts.scope.close()
        await self._container.close()

    @overload
    async def run(
        self, goal: str, *, session_id: str | None = None, output: None = None, max_steps: int | None = None
    ) -> AgentResult[None]: ...

    @overload
    async def run(
        self, goal: str, *, session_id: str | None = None, output: type[T], max_steps: int | None = None
    ) -> AgentResult[T]: ...

    async def run(
        self,
        goal: str,
        *,
        session_id: str | None = None,
        output: type[T] | None = None,
        max_steps: int | None = None,
    ) -> AgentResult[T] | AgentResult[None]:
        """Run the agent on `goal` to the end.

        Args:
            goal: What to do.
            session_id: Continue this conversation (kept in memory for this Agent).
            output: A msgspec Struct type for typed final output: the run ends when the model
                calls `final_result` with arguments that validate, and `result.output` is an instance.
            max_steps: Fewer LLM turns than the Agent's limit, if wanted.

        Raises:
            InvalidGoal: the goal is empty, or `output` is not a Struct type with fields.
        """
        schema = None
        if output is not None:
            schema = inline_refs(msgspec.json.schema(output))
            schema.pop("title", None)
        parts = await self._resolved()
        run = await parts.run_agent.execute(
            CreateRunInput(
                owner=LOCAL,
                goal=goal,
                session_id=SessionId(session_id) if session_id else None,
                output_schema=schema,
                max_steps=max_steps,
            )
        )
        # read at once, with no await that could yield between the run's end and the read: in memory
        # nothing waits, so another run's start cannot forget this one first
        steps = await parts.trace.steps(run.id)
        if not self._keep_runs:
            parts.runs.forget(run.id)
        typed = None
        if output is not None and isinstance(run.output, dict):
            # a field the model left out is null in the stored output: let the Struct's default fill it
            given = {name: value for name, value in run.output.items() if value is not None}
            typed = msgspec.convert(given, output)
        return AgentResult(run=run, steps=steps, output=typed)

    async def recent(self) -> list[AgentResult[Any]]:
        """The ended runs kept (`keep_runs` of them at most), the latest first, each with its steps."""
        parts = await self._resolved()
        return [AgentResult(run=run, steps=await parts.trace.steps(run.id)) for run in parts.runs.ended()]

    async def _resolved(self) -> "_Parts":
        """The use-case and stores every run uses, resolved once (a container scope costs more than a step)."""
        if self._parts is None:
            scope = await self._container().__aenter__()
            self._parts = _Parts(
                scope=scope,
                run_agent=await scope.get(RunAgent),
                trace=await scope.get(TraceReader),
                runs=await scope.get(InMemoryRunRepository),
            )
        return self._parts


class _Parts:
    """What an Agent resolved from its container: one scope, kept for the Agent's life."""

    __slots__ = ("run_agent", "runs", "scope", "trace")

    def __init__(self, *, scope: AsyncContainer, run_agent: RunAgent, trace: TraceReader, runs: InMemoryRunRepository):
        self.scope = scope
        self.run_agent = run_agent
        self.trace = trace
        self.runs = runs
