"""Streamed runs: the model's fragments reach the run's event log in order, then give way to the stored step."""

import asyncio
from collections.abc import AsyncIterator, Sequence

import msgspec

from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunEventLog,
    InMemoryRunRepository,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.application.agent import AgentLoop
from agentkit.application.errors import LLMUnavailable
from agentkit.application.observation import ObservedRunRepository, RunEventFeed, RunObservers
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.run_event_log import DeltaEvent, LoggedEvent, StatusEvent, StepEvent
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.tools import ToolRegistry
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, ToolCall, ToolCallDelta, Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep
from agentkit.domain.tools import ToolSchema
from tests.sample_tools import add
from tests.unit.application.harness import OWNER

CALL = ToolCall(id=ToolCallId("c1"), name="add", arguments={"a": 2, "b": 3})


class StreamingModel(LLMClient):
    """Answers with the scripted turns, each streamed in pieces; `gate`, when set, holds a turn mid-stream."""

    def __init__(self, turns: Sequence[tuple[list[LLMDelta], LLMResponse]], *, break_after: int | None = None) -> None:
        self._turns = list(turns)
        self.chats = 0
        self.streams = 0
        self.gate: asyncio.Event | None = None
        self.inside = asyncio.Event()
        self._break_after = break_after

    @property
    def provider(self) -> str:
        return "test"

    @property
    def model(self) -> str:
        return "streaming"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        self.chats += 1
        return self._turns.pop(0)[1]

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        self.streams += 1
        fragments, response = self._turns.pop(0)
        for number, fragment in enumerate(fragments, 1):
            yield fragment
            if number == 2:
                self.inside.set()
                if self.gate is not None:
                    await self.gate.wait()
            if self._break_after == number:
                raise LLMUnavailable("the connection broke mid-stream")
        yield response


def words(text: str) -> list[LLMDelta]:
    return [TextDelta(text=piece) for piece in text.split("|")]


ANSWER = (words("The sum| is| 5."), LLMResponse(text="The sum is 5.", usage=Usage(output_tokens=4)))
PIECES = [
    ToolCallDelta(index=0, id=CALL.id, name="add", arguments='{"a": '),
    ToolCallDelta(index=0, arguments="2, "),
    ToolCallDelta(index=0, arguments='"b": 3}'),
]
CALLING: tuple[list[LLMDelta], LLMResponse] = ([*PIECES], LLMResponse(tool_calls=(CALL,)))


class Rig:
    """A loop on memory whose run observers log events, as the service's do."""

    def __init__(self, model: StreamingModel) -> None:
        self.model = model
        self.log = InMemoryRunEventLog()
        clock = FixedClock()
        self.pipeline = StepPipeline(trace=InMemoryTraceSink(), run_observers=RunObservers([RunEventFeed(self.log)]))
        self.runs = ObservedRunRepository(InMemoryRunRepository(), self.pipeline)
        self.loop = AgentLoop(
            memory_loop_deps(model, ToolRegistry([add]), runs=self.runs, clock=clock, pipeline=self.pipeline)
        )
        self.create = CreateRun(
            runs=self.runs, clock=clock, ids=SequentialIdGenerator(), max_steps=5, max_goal_chars=99
        )

    async def start(self, *, stream: bool) -> Run:
        return (await self.create.execute(CreateRunInput(owner=OWNER, goal="2+3?", stream=stream))).run

    async def events(self, run: Run) -> list[LoggedEvent]:
        await self.pipeline.deliver()
        return await self.log.read(run.id, after=None, block_s=0, limit=500)


def fragments(events: list[LoggedEvent]) -> list[DeltaEvent]:
    return [entry.event for entry in events if isinstance(entry.event, DeltaEvent)]


async def test_a_streamed_answer_reaches_the_log_in_order_then_gives_way_to_its_step() -> None:
    model = StreamingModel([ANSWER])
    model.gate = asyncio.Event()
    rig = Rig(model)
    run = await rig.start(stream=True)
    task = asyncio.create_task(rig.loop.run(run))
    await model.inside.wait()

    mid_stream = fragments(await rig.events(run))
    model.gate.set()
    done = await task

    assert [(f.step_no, f.kind) for f in mid_stream] == [(1, "text")]  # the first two, joined in one batch
    assert mid_stream[0].text == "The sum is"
    assert done.status is RunStatus.SUCCEEDED
    assert done.answer == "The sum is 5."
    after = await rig.events(run)
    assert fragments(after) == []  # the step has it all: a reader from the start meets the step
    steps = [entry.event.step for entry in after if isinstance(entry.event, StepEvent)]
    assert isinstance(steps[0], LLMStep)
    assert steps[0].text == "The sum is 5."
    assert (model.streams, model.chats) == (1, 0)


async def test_a_calls_argument_fragments_join_to_its_arguments() -> None:
    model = StreamingModel([CALLING, ANSWER])
    model.gate = asyncio.Event()
    rig = Rig(model)
    run = await rig.start(stream=True)
    task = asyncio.create_task(rig.loop.run(run))
    await model.inside.wait()
    first = fragments(await rig.events(run))
    model.gate.set()
    await asyncio.sleep(0)
    done = await task

    assert done.status is RunStatus.SUCCEEDED
    assert first[0].call_id == "c1"
    assert first[0].name == "add"
    assert first[0].kind == "tool_call"
    assert "".join(f.text for f in first) == '{"a": 2, '  # two of three pieces so far, joined
    steps = [entry.event.step for entry in await rig.events(done) if isinstance(entry.event, StepEvent)]
    assert isinstance(steps[0], LLMStep)
    assert steps[0].tool_calls == (CALL,)
    assert msgspec.json.decode("".join(piece.arguments for piece in PIECES)) == CALL.arguments


async def test_a_run_nobody_follows_asks_for_the_whole_answer() -> None:
    model = StreamingModel([ANSWER])
    rig = Rig(model)

    done = await rig.loop.run(await rig.start(stream=False))

    assert done.answer == "The sum is 5."
    assert (model.streams, model.chats) == (0, 1)


async def test_a_run_someone_follows_streams_from_its_next_call() -> None:
    model = StreamingModel([ANSWER])
    rig = Rig(model)
    run = await rig.start(stream=False)

    rig.loop.mark_followed(run.id)  # as a follower's word, through the run events, marks it
    done = await rig.loop.run(run)

    assert done.answer == "The sum is 5."
    assert (model.streams, model.chats) == (1, 0)


async def test_a_stream_that_breaks_after_fragments_is_a_failed_step_not_a_retry() -> None:
    model = StreamingModel([ANSWER], break_after=2)
    rig = Rig(model)

    done = await rig.loop.run(await rig.start(stream=True))

    assert done.status is RunStatus.FAILED
    assert done.failure_reason == "the LLM call failed: the connection broke mid-stream"
    assert model.streams == 1
    events = await rig.events(done)
    steps = [entry.event.step for entry in events if isinstance(entry.event, StepEvent)]
    assert isinstance(steps[0], LLMStep)
    assert steps[0].error_type == "LLMUnavailable"
    assert fragments(events) == []  # the failed step is logged: its fragments went with it
    assert isinstance(events[-1].event, StatusEvent)


async def test_a_resumed_run_says_retry_before_streaming_its_step_again() -> None:
    model = StreamingModel([ANSWER])
    model.gate = asyncio.Event()
    rig = Rig(model)
    run = await rig.start(stream=True)
    claimed = await rig.runs.claim(run.id, attempt=0, now=run.created_at, until=run.created_at)
    assert claimed is not None  # an earlier attempt took it and died: its lease lapsed at once
    task = asyncio.create_task(rig.loop.run(claimed))
    await model.inside.wait()

    mid_stream = fragments(await rig.events(claimed))
    model.gate.set()
    done = await task

    assert [f.kind for f in mid_stream] == ["retry", "text"]
    assert mid_stream[0].step_no == mid_stream[1].step_no == 1
    assert done.status is RunStatus.SUCCEEDED
