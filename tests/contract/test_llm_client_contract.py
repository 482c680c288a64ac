"""The LLMClient contract, run against the OpenAI adapter, the Gemini adapter and the scripted one.

Each harness makes a client that will meet a named situation: the SDK adapters through their
real SDKs on a transport replaying recorded provider answers, the scripted one from a script
that says the same. The assertions are the port's promises, whatever the provider. The last tests
hold the OpenAI adapter to them for every answer recorded from a real local server.

Streaming: each harness also makes a client whose provider streams the same answers (the SDK
adapters read them as the Server-Sent Events their APIs send, see `tests/fixtures/llm/streams.py`).
Every stream must end with exactly the response `chat` gives for the same answer, and its fragments
must concatenate to that response's text and to each call's arguments.
"""

import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

import httpx
import pytest

from agentkit.adapters.llm.scripted import ScriptedFailure, ScriptedLLMClient
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import (
    FinishReason,
    LLMDelta,
    LLMResponse,
    Message,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.domain.tools import ToolSchema
from agentkit.testing.llm_conformance.suite import assert_fragments_make_up
from tests.fixtures.llm.recorded import RecordedExchange, recorded
from tests.fixtures.llm.replay import Provider, ReplayTransport, Reply, gemini_client, openai_client, replies
from tests.fixtures.llm.streams import gemini_chunks, made_up_ids_blanked, openai_chunks, read_into, streamed

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
UNAVAILABLE = [ScriptedFailure(error=LLMUnavailable("the script is overloaded"))]


@dataclass
class Harness:
    """Makes clients of one adapter for a situation, answering whole or streaming; closes what it made."""

    name: str
    make: Callable[[str, bool], LLMClient]
    made: list[LLMClient] = field(default_factory=list)

    def client(self, situation: str) -> LLMClient:
        """A client whose provider answers whole (for `chat`)."""
        return self._keep(self.make(situation, False))

    def streaming_client(self, situation: str) -> LLMClient:
        """A client whose provider streams the same answers (for `stream`)."""
        return self._keep(self.make(situation, True))

    def _keep(self, client: LLMClient) -> LLMClient:
        self.made.append(client)
        return client


def _as_stream(provider: Provider, answer: httpx.Response) -> Reply:
    """A recorded whole answer as its provider would have streamed it; an error answer stays as it is."""
    if answer.status_code != 200:
        return answer
    body = answer.json()
    return streamed(openai_chunks(body) if provider == "openai" else gemini_chunks(body))


def _replaying(provider: Provider) -> Callable[[str, bool], LLMClient]:
    build = openai_client if provider == "openai" else gemini_client

    def make(situation: str, streaming: bool) -> LLMClient:
        answers = replies(provider, *RECORDINGS[provider][situation])
        if streaming:
            answers = [_as_stream(provider, answer) for answer in answers if isinstance(answer, httpx.Response)]
        return build(ReplayTransport(answers))

    return make


def _scripted(situation: str, streaming: bool) -> LLMClient:
    return ScriptedLLMClient(UNAVAILABLE if situation == "unavailable" else SCRIPTS[situation])


@pytest.fixture(params=["openai", "gemini", "scripted"])
async def harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    name: str = request.param
    if name == "scripted":
        made = Harness(name, _scripted)
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
    client = _replaying(provider)("unavailable", False)
    with pytest.raises(LLMUnavailable):
        await client.chat(CONVERSATION, [WEATHER])
    await client.aclose()


# --- Streaming: the same promises, and the stream ends with what chat gives ---

Items = list[LLMDelta | LLMResponse]


async def _streamed(client: LLMClient, messages: Sequence[Message] = CONVERSATION) -> Items:
    return [item async for item in client.stream(messages, [WEATHER])]


def assert_stream_keeps_the_ports_promises(items: Items, whole: LLMResponse) -> None:
    """The stream ended with `whole` (what chat gives) and its fragments make up that response."""
    *fragments, response = items
    assert isinstance(response, LLMResponse)
    deltas = [fragment for fragment in fragments if isinstance(fragment, TextDelta | ToolCallDelta)]
    assert deltas == fragments  # nothing but fragments before the response
    assert made_up_ids_blanked(response) == made_up_ids_blanked(whole)
    assert_fragments_make_up(deltas, response)


@pytest.mark.parametrize("situation", ["text", "tool_call", "tool_calls", "refusal"])
async def test_a_stream_ends_with_the_response_chat_gives_and_its_fragments_make_it_up(
    harness: Harness, situation: str
) -> None:
    whole = await harness.client(situation).chat(CONVERSATION, [WEATHER])
    items = await _streamed(harness.streaming_client(situation))
    assert_stream_keeps_the_ports_promises(items, whole)
    if whole.text:
        assert len(items) > 2, "the text came in more than one fragment"


async def test_a_streamed_turn_goes_on_as_one_read_whole(harness: Harness) -> None:
    client = harness.streaming_client("round_trip")
    first = (await _streamed(client))[-1]
    assert isinstance(first, LLMResponse)
    history = [
        *CONVERSATION,
        first.to_message(),
        *(Message(role="tool", content="18 °C", tool_call_id=call.id, name=call.name) for call in first.tool_calls),
    ]
    second = (await _streamed(client, history))[-1]
    assert isinstance(second, LLMResponse)
    assert second.text
    assert second.tool_calls == ()


async def test_a_rejected_request_raises_llm_request_error_from_the_stream(harness: Harness) -> None:
    with pytest.raises(LLMRequestError):
        await _streamed(harness.streaming_client("rejected"))


async def test_transient_trouble_raises_llm_unavailable_from_the_stream_before_any_fragment(harness: Harness) -> None:
    seen: Items = []
    with pytest.raises(LLMUnavailable):
        await read_into(seen, harness.streaming_client("unavailable").stream(CONVERSATION, [WEATHER]))
    assert seen == []  # so the retry policy may try again


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


_ANSWERS = [
    pytest.param(exchange, id=f"{name}-{index}")
    for name in _CONVERSATIONS
    for index, exchange in enumerate(recorded(name))
    if exchange.status == 200
]


@pytest.mark.parametrize("text_tool_calls", [False, True], ids=["plain", "text_tool_calls"])
@pytest.mark.parametrize("exchange", _ANSWERS)
async def test_every_recorded_answer_of_a_compatible_server_streamed_ends_with_what_chat_reads(
    exchange: RecordedExchange, text_tool_calls: bool
) -> None:
    settings: dict[str, object] = {"llm_base_url": "http://127.0.0.1:8000/v1", "llm_model": "local"}
    settings["llm_text_tool_calls"] = text_tool_calls
    whole_client = openai_client(ReplayTransport([exchange.reply()]), **settings)
    streaming_client = openai_client(ReplayTransport([streamed(openai_chunks(exchange.response))]), **settings)
    try:
        whole = await whole_client.chat(_messages_of(exchange), _tools_of(exchange))
        items = [item async for item in streaming_client.stream(_messages_of(exchange), _tools_of(exchange))]
    finally:
        await whole_client.aclose()
        await streaming_client.aclose()
    assert_stream_keeps_the_ports_promises(items, whole)
