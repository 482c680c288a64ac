"""TraceSink / TraceReader contract: what is recorded reads back, in step order, per run."""

import uuid
from datetime import UTC, datetime, timedelta

import msgspec

from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import FinishReason, Message, ToolCall, Usage
from agentkit.domain.run import Run
from agentkit.domain.steps import LLMStep, PromptDelta, PromptRef, RunPrompts, Step, StoredMessage, ToolSet, ToolStep
from agentkit.domain.tools import ToolResult, ToolSchema
from tests.contract.conftest import StateKit

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


async def stored_run(kit: StateKit) -> RunId:
    """A run the steps can belong to (Postgres checks the foreign key)."""
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("key-1"), goal="weather?", created_at=T0)
    await kit.runs.add(run)
    return run.id


def llm_step(run_id: RunId, step_no: int, **extra: object) -> LLMStep:
    """An LLM step that asked for a tool."""
    fields: dict[str, object] = {
        "run_id": run_id,
        "step_no": step_no,
        "created_at": T0 + timedelta(seconds=step_no),
        "latency_ms": 812.25,
        "usage": Usage(input_tokens=120, output_tokens=18),
        "text": "Let me look that up.",
        "tool_calls": (
            ToolCall(
                id=ToolCallId("call-1"),
                name="lookup",
                arguments={"city": "Paris", "units": ["C"]},
                provider_data={"thought_signature": "c2ln"},
            ),
        ),
        "finish_reason": FinishReason.TOOL_CALLS,
        "attempts": 2,
    }
    fields.update(extra)
    return LLMStep(**fields)  # type: ignore[arg-type]


def tool_step(run_id: RunId, step_no: int, result: ToolResult) -> ToolStep:
    """A tool step."""
    return ToolStep(
        run_id=run_id,
        step_no=step_no,
        created_at=T0 + timedelta(seconds=step_no),
        latency_ms=0.042,
        call_id=ToolCallId("call-1"),
        tool_name="lookup",
        arguments={"city": "Paris", "nested": {"deep": [1, 2.5, None, True]}},
        result=result,
    )


async def test_every_kind_of_step_reads_back_as_recorded_in_step_order(kit: StateKit) -> None:
    run_id = await stored_run(kit)
    recorded: list[Step] = [
        llm_step(run_id, 1),
        tool_step(run_id, 2, ToolResult(ok=True, output="sunny, 21 C" * 50, truncated=True, latency_ms=0.042)),
        tool_step(run_id, 3, ToolResult(ok=False, error="no weather station in 'Atlantis'", latency_ms=3.5)),
        llm_step(run_id, 4, text="It is sunny.", tool_calls=(), finish_reason=FinishReason.STOP, attempts=1),
        llm_step(run_id, 5, text="", tool_calls=(), finish_reason=None, error="provider unavailable"),
    ]
    for step in (recorded[2], recorded[0], recorded[4], recorded[1], recorded[3]):
        await kit.trace.record(step)

    assert await kit.reader.steps(run_id) == recorded


async def test_runs_keep_their_own_steps(kit: StateKit) -> None:
    first, second = await stored_run(kit), await stored_run(kit)
    await kit.trace.record(llm_step(first, 1))
    await kit.trace.record(llm_step(second, 1, text="other"))

    assert [s.run_id for s in await kit.reader.steps(first)] == [first]
    assert await kit.reader.steps(RunId(str(uuid.uuid4()))) == []
    assert await kit.reader.steps(RunId("not-a-uuid")) == []


async def test_a_structured_tool_value_reads_back(kit: StateKit) -> None:
    run_id = await stored_run(kit)
    result = ToolResult(ok=True, output='{"sum": 5}', value={"sum": 5, "parts": [2, 3]})
    await kit.trace.record(tool_step(run_id, 1, result))

    [step] = await kit.reader.steps(run_id)

    assert isinstance(step, ToolStep)
    assert step.result == result


async def test_when_a_tool_call_started_reads_back_beside_when_it_ended(kit: StateKit) -> None:
    # the calls of one turn run at once: their steps end in any order, and their times show the overlap
    run_id = await stored_run(kit)
    first = msgspec.structs.replace(
        tool_step(run_id, 1, ToolResult(ok=True, output="a", latency_ms=500.0)),
        started_at=T0 - timedelta(milliseconds=500, microseconds=7),
    )
    second = msgspec.structs.replace(
        tool_step(run_id, 2, ToolResult(ok=False, error="no", latency_ms=400.0)),
        started_at=T0 - timedelta(milliseconds=450),
        redacted=True,
    )
    await kit.trace.record(first)
    await kit.trace.record(second)

    assert await kit.reader.steps(run_id) == [first, second]


def sent_prompt(run_id: RunId, step_no: int, messages: list[Message], *, already: int) -> LLMStep:
    """An LLM step that sent `messages`, of which the first `already` an earlier step of its run had sent."""
    new = tuple(
        StoredMessage(seq=seq, message=message, sent_digest=f"d{seq}")
        for seq, message in enumerate(messages[already:], start=already + 1)
    )
    tool_set = ToolSet(digest="tools-1", schemas=(WEATHER,)) if already == 0 else None
    return llm_step(
        run_id,
        step_no,
        prompt=PromptRef(
            message_count=len(messages), tools_digest="tools-1", provider="openai", model="m", parameters={"t": 0}
        ),
        sent=PromptDelta(messages=new, tool_set=tool_set),
        response_id="resp-1",
        response_model="m-2026",
        provider_finish_reason="tool_calls",
        error_type=None,
        cost_usd=0.0125,
    )


WEATHER = ToolSchema(name="lookup", description="Weather.", parameters={"type": "object", "properties": {}})
CONVERSATION = [
    Message(role="system", content="be brief"),
    Message(role="user", content="weather in Paris?"),
    Message(
        role="assistant",
        tool_calls=(ToolCall(id=ToolCallId("call-1"), name="lookup", arguments={"city": "Paris"}),),
        provider_data={"sig": "x"},
    ),
    Message(role="tool", content="sunny", tool_call_id=ToolCallId("call-1"), name="lookup"),
]


async def test_what_llm_steps_sent_is_stored_once_and_each_step_refers_to_its_prefix(kit: StateKit) -> None:
    run_id = await stored_run(kit)
    first = sent_prompt(run_id, 1, CONVERSATION[:2], already=0)
    second = sent_prompt(run_id, 3, CONVERSATION, already=2)
    await kit.trace.record(first)
    await kit.trace.record(second)
    await kit.trace.record(sent_prompt(run_id, 5, CONVERSATION, already=0))  # sent again: stored once

    prompts = await kit.prompts.prompts(run_id)
    steps = await kit.reader.steps(run_id)

    assert [stored.message for stored in prompts.messages] == CONVERSATION
    assert [stored.digest for stored in prompts.messages] == ["d1", "d2", "d3", "d4"]
    assert prompts.tool_sets == {"tools-1": (WEATHER,)}
    assert steps[0] == msgspec.structs.replace(first, sent=None)
    assert isinstance(steps[0], LLMStep)
    assert isinstance(steps[1], LLMStep)
    assert prompts.sent_by(steps[1]) == (CONVERSATION, [WEATHER])
    assert prompts.sent_by(steps[0]) == (CONVERSATION[:2], [WEATHER])
    assert await kit.prompts.prompts(RunId("not-a-uuid")) == RunPrompts()


async def test_a_sink_says_it_is_flushed_only_when_every_recorded_step_is_stored(kit: StateKit) -> None:
    run_id = await stored_run(kit)

    await kit.trace.record(llm_step(run_id, 1))
    said_before_flush = kit.trace.flushed()
    await kit.trace.flush()

    assert kit.trace.flushed()
    if said_before_flush:  # a sink may write at once (the in-memory one); then the step is there already
        assert [step.step_no for step in await kit.reader.steps(run_id)] == [1]
