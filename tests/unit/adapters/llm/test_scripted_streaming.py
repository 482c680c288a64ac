"""The scripted and demo models stream their answers in fragments, as a provider does."""

import json
from collections.abc import Sequence

import pytest

from agentkit.adapters.llm.demo import DemoLLMClient
from agentkit.adapters.llm.scripted import ScriptedFailure, ScriptedLLMClient
from agentkit.adapters.tools.calculator import CalculatorLimits, make_calculator_tool
from agentkit.application.errors import LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, ToolCall, ToolCallDelta, Usage
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.streams import read_into

GOAL = [Message(role="user", content="What is the weather in Paris and Tokyo?")]
TURN = LLMResponse(
    text="I'll look both up.",
    tool_calls=(
        ToolCall(id=ToolCallId("c1"), name="get_weather", arguments={"city": "Paris", "unit": "celsius"}),
        ToolCall(id=ToolCallId("c2"), name="get_weather", arguments={"city": "Tokyo"}),
    ),
    usage=Usage(input_tokens=30, output_tokens=12),
)


async def collect(
    client: LLMClient, messages: Sequence[Message] = GOAL, tools: Sequence[ToolSchema] = ()
) -> list[LLMDelta | LLMResponse]:
    return [item async for item in client.stream(messages, tools)]


async def test_a_scripted_turn_streams_word_by_word_then_its_calls_in_pieces() -> None:
    items = await collect(ScriptedLLMClient([TURN]))

    assert items[-1] == TURN
    texts = [item.text for item in items if isinstance(item, TextDelta)]
    assert texts == ["I'll ", "look ", "both ", "up."]
    calls = [item for item in items if isinstance(item, ToolCallDelta)]
    assert len(calls) > 4  # the arguments come in several pieces
    assert [(d.index, d.id, d.name) for d in calls if d.id] == [(0, "c1", "get_weather"), (1, "c2", "get_weather")]
    assert [d.index for d in calls] == sorted(d.index for d in calls)  # one call after the other
    for index, call in enumerate(TURN.tool_calls):
        pieces = [d.arguments for d in calls if d.index == index]
        assert json.loads("".join(pieces)) == call.arguments
        assert [d.name for d in calls if d.index == index][1:] == [None] * (len(pieces) - 1)


async def test_white_space_is_kept_so_the_fragments_are_the_text() -> None:
    text = "  two  spaces,\nnew line\tand tab  "
    items = await collect(ScriptedLLMClient([LLMResponse(text=text)]))
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == text


async def test_a_scripted_failure_raises_from_chat_and_breaks_a_stream_after_its_fragments() -> None:
    failure = ScriptedFailure(error=LLMUnavailable("HTTP 503"), fragments=2, partial=TURN)
    client = ScriptedLLMClient([failure, failure])
    with pytest.raises(LLMUnavailable, match="HTTP 503") as from_chat:
        await client.chat(GOAL, [])

    seen: list[LLMDelta | LLMResponse] = []
    with pytest.raises(LLMUnavailable, match="HTTP 503") as from_stream:
        await read_into(seen, client.stream(GOAL, []))
    assert seen == [TextDelta(text="I'll "), TextDelta(text="look ")]
    # each failure is an error of its own: what a retry wrapper writes on one never shows on the next
    assert from_chat.value is not from_stream.value
    assert from_chat.value is not failure.error


async def test_the_demo_model_streams_the_turn_chat_gives() -> None:
    calculator = make_calculator_tool(CalculatorLimits()).schema
    goal = [Message(role="user", content="What is (17 + 25) * 3?")]

    items = await collect(DemoLLMClient(), goal, [calculator])

    assert items[-1] == await DemoLLMClient().chat(goal, [calculator])
    response = items[-1]
    assert isinstance(response, LLMResponse)
    (call,) = response.tool_calls
    deltas = [item for item in items[:-1] if isinstance(item, ToolCallDelta)]
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == "I'll compute it with the calculator."
    assert len(deltas) > 1
    assert (deltas[0].id, deltas[0].name) == (call.id, "calculator")
    assert json.loads("".join(d.arguments for d in deltas)) == {"expression": "(17 + 25) * 3"}
