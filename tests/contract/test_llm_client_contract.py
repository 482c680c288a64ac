"""The LLMClient contract, run against the OpenAI adapter, the Gemini adapter and the scripted one.

Each harness makes a client that will meet a named situation: the SDK adapters through their
real SDKs on a transport replaying recorded provider answers, the scripted one from a script
that says the same. The assertions are the port's promises, whatever the provider. The last test
holds the OpenAI adapter to them for every answer recorded from a real local server.
"""

import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.recorded import RecordedExchange, recorded
from tests.fixtures.llm.replay import Provider, ReplayTransport, gemini_client, openai_client, replies

WEATHER = ToolSchema(
    name="get_weather",
    description="The current weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CONVERSATION = [
    Message(role="system", content="You are a weather assistant."),
    Message(role="user", content="What is the weather in Paris?"),
]

# Each situation as recorded answers of each provider; the scripted harness plays SCRIPTS instead.
RECORDINGS: dict[Provider, dict[str, tuple[str, ...]]] = {
    "openai": {
        "text": ("text",),
        "tool_call": ("tool_call",),
        "tool_calls": ("tool_calls",),
        "refusal": ("refusal",),
        "round_trip": ("tool_calls", "after_tool"),
        "rejected": ("bad_request",),
        "unavailable": ("server_error",),
    },
    "gemini": {
        "text": ("text",),
        "tool_call": ("tool_call",),
        "tool_calls": ("tool_calls",),
        "refusal": ("safety_block",),
        "round_trip": ("tool_calls", "after_tool"),
        "rejected": ("bad_request",),
        "unavailable": ("server_error",),
    },
}


def _call(call_id: str, city: str) -> ToolCall:
    return ToolCall(id=ToolCallId(call_id), name="get_weather", arguments={"city": city})


_USAGE = Usage(input_tokens=20, output_tokens=5)
SCRIPTS: dict[str, list[LLMResponse]] = {
    "text": [LLMResponse(text="Paris is the capital of France.", usage=_USAGE)],
    "tool_call": [
        LLMResponse(tool_calls=(_call("s-1", "Paris"),), usage=_USAGE, finish_reason=FinishReason.TOOL_CALLS)
    ],
    "tool_calls": [
        LLMResponse(
            tool_calls=(_call("s-1", "Paris"), _call("s-2", "Tokyo")),
            usage=_USAGE,
            finish_reason=FinishReason.TOOL_CALLS,
        )
    ],
    "refusal": [LLMResponse(refusal="I can't help with that.", usage=_USAGE, finish_reason=FinishReason.REFUSED)],
    "rejected": [],  # a script that has run out is the scripted client's rejected request
}
SCRIPTS["round_trip"] = [*SCRIPTS["tool_calls"], *SCRIPTS["text"]]


@dataclass
class Harness:
    """Makes a client of one adapter for a situation, and closes what it made."""

    name: str
    make: Callable[[str], LLMClient]
    made: list[LLMClient] = field(default_factory=list)

    def client(self, situation: str) -> LLMClient:
        client = self.make(situation)
        self.made.append(client)
        return client


def _replaying(provider: Provider) -> Callable[[str], LLMClient]:
    build = openai_client if provider == "openai" else gemini_client

    def make(situation: str) -> LLMClient:
        return build(ReplayTransport(replies(provider, *RECORDINGS[provider][situation])))

    return make


@pytest.fixture(params=["openai", "gemini", "scripted"])
async def harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    name: str = request.param
    if name == "scripted":
        made = Harness(name, lambda situation: ScriptedLLMClient(SCRIPTS[situation]))
    else:
        made = Harness(name, _replaying("openai" if name == "openai" else "gemini"))
    yield made
    for client in made.made:
        await client.aclose()


async def test_a_plain_answer(harness: Harness) -> None:
    response = await harness.client("text").chat(CONVERSATION, [WEATHER])
    assert response.text
    assert response.tool_calls == ()
    assert response.finish_reason is FinishReason.STOP
    assert response.refusal is None
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0


async def test_one_tool_call_names_the_tool_and_carries_parsed_arguments(harness: Harness) -> None:
    response = await harness.client("tool_call").chat(CONVERSATION, [WEATHER])
    assert response.finish_reason is FinishReason.TOOL_CALLS
    (call,) = response.tool_calls
    assert call.id
    assert call.name == "get_weather"
    assert call.arguments["city"] == "Paris"
    assert call.arguments_error is None


async def test_several_tool_calls_keep_their_order_and_have_distinct_ids(harness: Harness) -> None:
    response = await harness.client("tool_calls").chat(CONVERSATION, [WEATHER])
    assert [call.arguments["city"] for call in response.tool_calls] == ["Paris", "Tokyo"]
    assert len({call.id for call in response.tool_calls}) == 2


async def test_a_refusal_is_reported_as_refused_with_a_reason(harness: Harness) -> None:
    response = await harness.client("refusal").chat(CONVERSATION, [WEATHER])
    assert response.finish_reason is FinishReason.REFUSED
    assert response.refusal
    assert response.tool_calls == ()


async def test_tool_results_answer_the_calls_and_the_conversation_goes_on(harness: Harness) -> None:
    client = harness.client("round_trip")
    first = await client.chat(CONVERSATION, [WEATHER])
    history = [
        *CONVERSATION,
        first.to_message(),
        *(Message(role="tool", content="18 °C", tool_call_id=call.id, name=call.name) for call in first.tool_calls),
    ]
    second = await client.chat(history, [WEATHER])
    assert second.text
    assert second.tool_calls == ()


async def test_a_rejected_request_raises_llm_request_error(harness: Harness) -> None:
    with pytest.raises(LLMRequestError):
        await harness.client("rejected").chat(CONVERSATION, [WEATHER])


# A script never meets transient trouble: this promise concerns the adapters that talk to a provider.
@pytest.mark.parametrize("provider", ["openai", "gemini"])
async def test_transient_trouble_raises_llm_unavailable_for_the_retry_policy(provider: Provider) -> None:
    client = _replaying(provider)("unavailable")
    with pytest.raises(LLMUnavailable):
        await client.chat(CONVERSATION, [WEATHER])
    await client.aclose()


# --- The port's promises for what a real OpenAI-compatible server answered (llama-cpp-python 0.3.36) ---
# Every recorded answer, through the OpenAI adapter and its SDK (tests/fixtures/llm/llama_cpp/README.md).

_CONVERSATIONS = (
    "calculator_until_context_overflow",
    "structured_output",
    "missing_content_500",
    "empty_text_answer",
    "qwen_text_tool_calls",
    "function_name_as_text",
)
_EXCHANGES = [
    pytest.param(exchange, id=f"{name}-{index}")
    for name in _CONVERSATIONS
    for index, exchange in enumerate(recorded(name))
]


def _tools_of(exchange: RecordedExchange) -> list[ToolSchema]:
    return [
        ToolSchema(name=f["name"], description=f["description"], parameters=f["parameters"])
        for f in (tool["function"] for tool in exchange.request.get("tools", ()))
    ]


def _messages_of(exchange: RecordedExchange) -> list[Message]:
    # the system prompt and the goal are enough: the answer is replayed whatever the history
    return [Message(role=m["role"], content=m["content"]) for m in exchange.request["messages"][:2]]


@pytest.mark.parametrize("exchange", _EXCHANGES)
async def test_every_recorded_answer_of_a_compatible_server_keeps_the_ports_promises(
    exchange: RecordedExchange,
) -> None:
    transport = ReplayTransport([exchange.reply()])
    client = openai_client(transport, llm_base_url="http://127.0.0.1:8000/v1", llm_model="local")
    try:
        if exchange.status >= 500:
            with pytest.raises(LLMUnavailable, match=re.escape(exchange.response["error"]["message"])):
                await client.chat(_messages_of(exchange), _tools_of(exchange))
            return
        if exchange.status >= 400:
            with pytest.raises(LLMRequestError, match=re.escape(exchange.response["error"]["message"][:60])):
                await client.chat(_messages_of(exchange), _tools_of(exchange))
            return
        response = await client.chat(_messages_of(exchange), _tools_of(exchange))
    finally:
        await client.aclose()

    answer = exchange.answer
    recorded_calls = answer.get("tool_calls") or []
    assert [(call.id, call.name) for call in response.tool_calls] == [
        (call["id"], call["function"]["name"]) for call in recorded_calls
    ]
    for call, raw in zip(response.tool_calls, recorded_calls, strict=True):
        assert call.arguments_error is None  # raw newlines in argument strings included
        assert call.arguments == json.loads(raw["function"]["arguments"], strict=False)
    if recorded_calls:
        assert response.finish_reason is FinishReason.TOOL_CALLS
        assert response.text == ""
    else:  # text stays text, even a JSON tool call (LLM_TEXT_TOOL_CALLS is off) or an empty one
        assert (response.text, response.finish_reason) == (answer["content"], FinishReason.STOP)
    assert response.refusal is None
    assert response.usage == Usage(
        input_tokens=exchange.response["usage"]["prompt_tokens"],
        output_tokens=exchange.response["usage"]["completion_tokens"],
    )
