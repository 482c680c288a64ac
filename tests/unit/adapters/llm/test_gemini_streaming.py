"""The Gemini adapter's stream, through the real `google-genai` SDK reading replayed Server-Sent Events."""

import base64
import json
from collections.abc import Sequence
from typing import Any

import pytest

from agentkit.adapters.llm.gemini_client import GeminiLLMClient
from agentkit.adapters.llm.gemini_translate import SYNTHETIC_ID_KEY, THOUGHT_SIGNATURE_KEY
from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import FinishReason, LLMDelta, LLMResponse, Message, TextDelta, ToolCallDelta, Usage
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.conversation import CONVERSATION, WEATHER, Sleeps
from tests.fixtures.llm.replay import ReplayTransport, Reply, gemini_client, reply
from tests.fixtures.llm.streams import body_of, gemini_chunks, made_up_ids_blanked, read_into, sse_reply, streamed

Items = list[LLMDelta | LLMResponse]
SIGNATURE = "CiQBg6ADAK1qJQLD/Y8E9QtH9c5gSWYUU06/a/n8hcheGw30b1mQ6/rcqxmRByWLna3YcRvXlA=="


def with_retries(client: GeminiLLMClient, sleeps: Sleeps) -> RetryingLLMClient:
    policy = RetryPolicy(max_retries=3, base_s=1.0, cap_s=20.0, attempt_timeout_s=5.0)
    return RetryingLLMClient(client, policy, sleep=sleeps, rand=lambda: 0.5)


async def collect(client: LLMClient, messages: Sequence[Message] = CONVERSATION) -> Items:
    tools: Sequence[ToolSchema] = [WEATHER]
    return [item async for item in client.stream(messages, tools)]


async def stream_once(*answers: Reply) -> tuple[Items, ReplayTransport]:
    transport = ReplayTransport(answers)
    client = gemini_client(transport)
    try:
        items = await collect(client)
    finally:
        await client.aclose()
    return items, transport


async def chat_once(answer: Reply) -> LLMResponse:
    client = gemini_client(ReplayTransport([answer]))
    try:
        return await client.chat(CONVERSATION, [WEATHER])
    finally:
        await client.aclose()


def texts(items: Items) -> list[str]:
    return [item.text for item in items if isinstance(item, TextDelta)]


def recorded(name: str) -> dict[str, Any]:
    body: dict[str, Any] = reply("gemini", name).json()
    return body


async def test_text_streams_chunk_by_chunk_and_ends_with_what_chat_reads() -> None:
    items, transport = await stream_once(sse_reply("gemini", "stream_text"))

    assert texts(items) == ["Paris is", " the capital of", " France."]
    assert items[-1] == await chat_once(reply("gemini", "text"))  # signature, usage and ids included
    (request,) = transport.requests
    assert request.url.path.endswith("/models/gemini-2.5-flash:streamGenerateContent")
    assert request.url.params["alt"] == "sse"
    assert transport.bodies()[0]["contents"] == [{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}]


async def test_a_function_call_comes_whole_after_the_text_before_it() -> None:
    items, _ = await stream_once(sse_reply("gemini", "stream_tool_call"))

    response = items[-1]
    assert isinstance(response, LLMResponse)
    (call,) = response.tool_calls
    assert items[:-1] == [
        TextDelta(text="Let me look"),
        TextDelta(text=" it up."),
        ToolCallDelta(index=0, id=call.id, name="get_weather", arguments='{"city":"Paris","unit":"celsius"}'),
    ]
    assert (response.text, response.finish_reason) == ("Let me look it up.", FinishReason.TOOL_CALLS)
    assert (call.arguments, call.provider_data) == (
        {"city": "Paris", "unit": "celsius"},
        {THOUGHT_SIGNATURE_KEY: SIGNATURE, SYNTHETIC_ID_KEY: True},  # the id sent in the fragment is the one kept
    )
    assert response.usage == Usage(input_tokens=73, output_tokens=21 + 56)  # the last chunk's: the whole usage
    assert response.response_id == "qW3pZ9CkM7-LmtkPz8a4kQ8"


@pytest.mark.parametrize(
    "name", ["text", "tool_call", "tool_call_with_id", "tool_calls", "after_tool", "safety_block", "prompt_blocked"]
)
async def test_every_recorded_answer_streamed_ends_with_what_chat_reads(name: str) -> None:
    items, _ = await stream_once(streamed(gemini_chunks(recorded(name)), separator="\r\n\r\n"))

    response = items[-1]
    assert isinstance(response, LLMResponse)
    assert made_up_ids_blanked(response) == made_up_ids_blanked(await chat_once(reply("gemini", name)))
    if response.finish_reason is not FinishReason.REFUSED:
        assert "".join(texts(items)) == response.text
    calls = [item for item in items if isinstance(item, ToolCallDelta)]
    assert [(d.index, d.id, d.name) for d in calls] == [
        (index, call.id, call.name) for index, call in enumerate(response.tool_calls)
    ]
    assert [json.loads(d.arguments) for d in calls] == [call.arguments for call in response.tool_calls]


async def test_the_next_turn_echoes_a_streamed_answer_as_it_echoes_one_read_whole() -> None:
    transport = ReplayTransport([sse_reply("gemini", "stream_tool_call"), reply("gemini", "after_tool")])
    client = gemini_client(transport)
    first = (await collect(client))[-1]
    assert isinstance(first, LLMResponse)
    (call,) = first.tool_calls
    result = Message(role="tool", content="18 °C", tool_call_id=call.id, name=call.name)
    await client.chat([*CONVERSATION, first.to_message(), result], [WEATHER])
    await client.aclose()

    text, function = transport.bodies()[1]["contents"][1]["parts"]
    assert text == {"text": "Let me look it up."}  # the pieces as one part, as Gemini wrote it
    assert function["functionCall"] == {"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}}
    assert base64.urlsafe_b64decode(function["thoughtSignature"]) == base64.b64decode(SIGNATURE)


async def test_a_block_after_some_text_ends_refused_as_chat_says() -> None:
    blocked = recorded("safety_block")
    blocked["candidates"][0]["content"]["parts"] = [{"text": "Here is how to"}]
    items, _ = await stream_once(streamed(gemini_chunks(blocked)))
    assert texts(items) == ["Here i", "s how ", "to"]  # they went out before the block came
    assert items[-1] == LLMResponse(
        usage=Usage(input_tokens=15),
        finish_reason=FinishReason.REFUSED,
        refusal="Gemini blocked the answer (SAFETY)",
    )


async def test_a_stream_that_breaks_after_two_fragments_is_an_error_and_not_retried() -> None:
    broken = streamed(gemini_chunks(recorded("text")), break_after=2)
    transport, sleeps = ReplayTransport([broken, sse_reply("gemini", "stream_text")]), Sleeps()
    seen: Items = []
    with pytest.raises(LLMUnavailable, match=r"broke off after 2 fragments.*connection to Gemini broke") as caught:
        await read_into(seen, with_retries(gemini_client(transport), sleeps).stream(CONVERSATION, [WEATHER]))
    assert texts(seen) == ["Paris ", "is the"]
    assert (caught.value.attempts, len(transport.requests), sleeps.waits) == (1, 1, [])
    assert body_of(broken).closed


@pytest.mark.parametrize(("failure", "waits"), [("rate_limited", [7.0]), ("server_error", [0.5])])
async def test_a_429_or_503_before_the_first_fragment_is_retried(failure: str, waits: list[float]) -> None:
    transport, sleeps = ReplayTransport([reply("gemini", failure), sse_reply("gemini", "stream_text")]), Sleeps()
    items = await collect(with_retries(gemini_client(transport), sleeps))
    assert items[-1].attempts == 2  # type: ignore[union-attr]
    assert sleeps.waits == waits  # Gemini's RetryInfo is honoured as for chat


async def test_an_error_chunk_in_the_stream_is_translated_as_an_error_answer() -> None:
    overloaded = recorded("server_error")  # {"error": {"code": 503, ...}}, as Gemini sends it mid-stream
    with pytest.raises(LLMUnavailable, match="Gemini answered HTTP 503 UNAVAILABLE: The model is overloaded"):
        await stream_once(streamed([*gemini_chunks(recorded("text"))[:1], overloaded]))


async def test_a_rejected_request_is_not_retried() -> None:
    transport = ReplayTransport([reply("gemini", "bad_request")])
    with pytest.raises(LLMRequestError, match=r"rejected the request \(HTTP 400 INVALID_ARGUMENT\)") as caught:
        await collect(with_retries(gemini_client(transport), Sleeps()))
    assert caught.value.attempts == 1


async def test_a_stream_that_ends_without_a_finish_reason_is_transient() -> None:
    events = gemini_chunks(recorded("text"))
    with pytest.raises(LLMUnavailable, match="stream ended before the answer did"):
        await stream_once(streamed(events[:-1]))


async def test_a_malformed_function_call_is_transient_as_with_chat() -> None:
    with pytest.raises(LLMUnavailable, match="could not parse the model's function call"):
        await stream_once(streamed(gemini_chunks(recorded("malformed_function_call"))))
