"""`Agent`: AgentKit from Python, in one process, with state in memory.

agent = Agent(llm=ScriptedLLMClient([...]), tools=[add])
result = await agent.run("what is 2+3?")
print(result.answer, [step.step_no for step in result.steps])
"""

from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar, overload

import msgspec
from dishka import AsyncContainer

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
    """An agent over these tools and this LLM, keeping runs, traces and sessions in memory.

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
    ) -> None:
        self.registry = ToolRegistry(tools, default_timeout_s=tool_timeout_s, context_providers=context_providers)
        self._container: AsyncContainer = library_container(
            llm=llm,
            registry=self.registry,
            system_prompt=system_prompt,
            max_steps=max_steps,
            run_timeout_s=run_timeout_s,
            tool_timeout_s=tool_timeout_s,
            token_budget=token_budget,
            observers=observers,
        )

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
        async with self._container() as request:
            run_agent = await request.get(RunAgent)
            run = await run_agent.execute(
                CreateRunInput(
                    owner=LOCAL,
                    goal=goal,
                    session_id=SessionId(session_id) if session_id else None,
                    output_schema=schema,
                    max_steps=max_steps,
                )
            )
        typed = None
        if output is not None and isinstance(run.output, dict):
            # a field the model left out is null in the stored output: let the Struct's default fill it
            given = {name: value for name, value in run.output.items() if value is not None}
            typed = msgspec.convert(given, output)
        trace = await self._container.get(TraceReader)
        return AgentResult(run=run, steps=await trace.steps(run.id), output=typed)
