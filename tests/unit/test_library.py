"""AgentKit from Python: `from agentkit import Agent, tool`."""

import gc
import os
import sys

import msgspec
import pytest

import agentkit
from agentkit import Agent, ToolContext, tool
from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from agentkit.domain.steps import LLMStep, ToolStep
from tests.context_tools import action_context, save_paper
from tests.process_tools import whoami
from tests.sample_tools import add


def call(name: str, **arguments: object) -> LLMResponse:
    return LLMResponse(
        tool_calls=(ToolCall(id=ToolCallId(f"c-{name}"), name=name, arguments=arguments),),
        usage=Usage(input_tokens=20, output_tokens=5),
    )


class Invoice(msgspec.Struct):
    customer: str
    total: float


async def test_an_agent_runs_a_tool_and_answers_with_its_trace() -> None:
    agent = Agent(llm=ScriptedLLMClient([call("add", a=2, b=3), LLMResponse(text="5")]), tools=[add])

    result = await agent.run("what is 2+3?")

    assert result.ok
    assert result.answer == "5"
    assert [type(step) for step in result.steps] == [LLMStep, ToolStep, LLMStep]
    assert result.run.input_tokens == 20


async def test_an_agent_runs_a_process_isolated_tool_in_a_worker_it_stops_when_closed() -> None:
    async with Agent(llm=ScriptedLLMClient([call("whoami"), LLMResponse(text="done")]), tools=[whoami]) as agent:
        result = await agent.run("where do you run?")
        [step] = [step for step in result.steps if isinstance(step, ToolStep)]

        assert step.result.ok
        worker = step.result.value
        assert worker != os.getpid()
    # closed with the agent: the worker is gone (killed and reaped)
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


async def test_typed_output_comes_back_as_the_struct_asked_for() -> None:
    llm = ScriptedLLMClient([call("final_result", customer="Ada", total=12.5)])
    agent = Agent(llm=llm, tools=[add])

    result = await agent.run("bill Ada", output=Invoice)

    assert result.output == Invoice(customer="Ada", total=12.5)
    offered = {schema.name: schema for schema in llm.requests[0][1]}
    assert offered["final_result"].parameters["required"] == ["customer", "total"]


async def test_hidden_context_and_sessions_work_from_python() -> None:
    seen: list[str | None] = []

    @tool
    def whoami(ctx: ToolContext) -> str:
        """Say which session this is."""
        seen.append(ctx.session_id)
        return "ok"

    llm = ScriptedLLMClient([call("whoami"), LLMResponse(text="done"), LLMResponse(text="again")])
    agent = Agent(llm=llm, tools=[whoami])

    await agent.run("first", session_id="s1")
    second = await agent.run("second", session_id="s1")

    assert seen == ["s1"]
    assert second.ok
    assert [m.content for m in llm.requests[2][0] if m.role == "user"] == ["first", "second"]
    assert "ctx" not in agent.registry.schemas()[0].parameters["properties"]


class Ticket(msgspec.Struct):
    title: str
    priority: int = 3
    labels: list[str] = msgspec.field(default_factory=lambda: ["triage"])


async def test_typed_output_fields_the_model_leaves_out_take_the_structs_defaults() -> None:
    agent = Agent(llm=ScriptedLLMClient([call("final_result", title="Printer on fire")]))

    result = await agent.run("file a ticket", output=Ticket)

    assert result.output == Ticket(title="Printer on fire", priority=3, labels=["triage"])


async def test_an_agent_serves_a_tool_with_a_typed_hidden_context() -> None:
    turns = [call("save_paper", title="On Loops", content="abc"), LLMResponse(text="Saved.")]
    agent = Agent(llm=ScriptedLLMClient(turns), tools=[save_paper], context_providers=[action_context])

    result = await agent.run("save my paper")

    assert result.ok
    tool_step = result.steps[1]
    assert isinstance(tool_step, ToolStep)
    assert tool_step.result.output.endswith(f"for run {result.run.id} with key #6907c4e8")


def test_every_name_the_package_exports_can_be_imported_from_it() -> None:
    missing = [name for name in agentkit.__all__ if not hasattr(agentkit, name)]

    assert missing == []
    assert {"context_provider", "extend"} <= set(agentkit.__all__)


async def test_one_agent_serves_many_runs_in_bounded_memory() -> None:
    # a run that never waits (a scripted model, an async tool that answers at once) is the hardest
    # case: nothing else runs between two runs to clean up after the first
    turns = [call("add", a=1, b=n) for n in range(3)] + [LLMResponse(text="done")]
    llm = ScriptedLLMClient(turns * 400)
    llm.record_requests = False  # the test's model would keep every request it was sent
    agent = Agent(llm=llm, tools=[add])
    blocks: dict[int, int] = {}

    for n in range(1, 401):
        result = await agent.run("count")
        assert result.ok
        assert len(result.steps) == 7
        if n in (100, 400):
            del result
            gc.collect()
            blocks[n] = sys.getallocatedblocks()

    # about 150 memory blocks a run were kept for the life of the Agent (steps, messages, events, timers)
    assert blocks[400] - blocks[100] < 300, "an Agent keeps something of every run it served"
    assert await agent.recent() == []
    await agent.aclose()


async def test_keep_runs_keeps_the_latest_ended_runs_for_inspection() -> None:
    agent = Agent(llm=ScriptedLLMClient([LLMResponse(text=f"answer {n}") for n in range(5)]), keep_runs=2)

    for n in range(5):
        await agent.run(f"question {n}")

    kept = await agent.recent()
    assert [result.answer for result in kept] == ["answer 4", "answer 3"]
    assert [len(result.steps) for result in kept] == [1, 1]
    await agent.aclose()
