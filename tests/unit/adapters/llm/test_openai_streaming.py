"""The OpenAI adapter's stream, through the real `openai` SDK reading replayed Server-Sent Events."""

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from agentkit.adapters.llm.openai_client import OpenAILLMClient
from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMDelta, LLMResponse, TextDelta, ToolCall, ToolCallDelta, Usage
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.conversation import CONVERSATION, WEATHER, Sleeps
from tests.fixtures.llm.replay import ReplayTransport, Reply, openai_client, reply
from tests.fixtures.llm.streams import CallStyle, body_of, openai_chunks, read_into, sse_reply, streamed

Items = list[LLMDelta | LLMResponse]


def with_retries(client: OpenAILLMClient, sleeps: Sleeps) -> RetryingLLMClient:
    policy = RetryPolicy(max_retries=3, base_s=1.0, cap_s=20.0, attempt_timeout_s=5.0)
    return RetryingLLMClient(client, policy, sleep=sleeps, rand=lambda: 0.5)


async def collect(client: LLMClient, tools: Sequence[ToolSchema] = (WEATHER,)) -> Items:
    return [item async for item in client.stream(CONVERSATION, tools)]


async def stream_once(*answers: Reply, **settings: Any) -> tuple[Items, ReplayTransport]:
    transport = ReplayTransport(answers)
    client = openai_client(transport, **settings)
    try:
        items = await collect(client)
    finally:
        await client.aclose()
    return items, transport


async def chat_once(answer: Reply, **settings: Any) -> LLMResponse:
    client = openai_client(ReplayTransport([answer]), **settings)
    try:
        return await client.chat(CONVERSATION, [WEATHER])
    finally:
        await client.aclose()


def texts(items: Items) -> list[str]:
    return [item.text for item in items if isinstance(item, TextDelta)]


def call_deltas(items: Items) -> list[ToolCallDelta]:
    return [item for item in items if isinstance(item, ToolCallDelta)]


def completion(name: str) -> dict[str, Any]:
    body: dict[str, Any] = reply("openai", name).json()
    return body


async def test_text_streams_piece_by_piece_and_ends_with_what_chat_reads() -> None:
    items, transport = await stream_once(sse_reply("openai", "stream_text"))

    assert texts(items) == ["Paris", " is", " the", " capital", " of", " France", "."]
    assert items[-1] == LLMResponse(
        text="Paris is the capital of France.",
        usage=Usage(input_tokens=24, output_tokens=8),  # from the last chunk, which has no choices
        finish_reason=FinishReason.STOP,
        response_id="chatcmpl-CJ1stream",
        response_model="gpt-4.1-mini-2025-04-14",
        provider_finish_reason="stop",
    )
    body = transport.bodies()[0]
    assert (body["stream"], body["stream_options"]) == (True, {"include_usage": True})
    assert (body["model"], body["tool_choice"], body["tools"][0]["function"]["name"]) == (
        "gpt-4.1-mini",
        "auto",
        "get_weather",
    )


async def test_two_calls_interleaved_by_index_are_told_apart() -> None:
    items, _ = await stream_once(sse_reply("openai", "stream_tool_calls_interleaved"))

    response = items[-1]
    assert isinstance(response, LLMResponse)
    assert response.tool_calls == (
        ToolCall(id=ToolCallId("call_A1b2C3d4E5f"), name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id=ToolCallId("call_F6g7H8i9J0k"), name="get_weather", arguments={"city": "Tokyo"}),
    )
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.usage == Usage(input_tokens=90, output_tokens=38)
    deltas = call_deltas(items)
    assert [d.index for d in deltas] == [0, 1, 0, 1, 0, 1, 0]  # as they came, not regrouped
    assert [(d.id, d.name) for d in deltas if d.id] == [
        ("call_A1b2C3d4E5f", "get_weather"),
        ("call_F6g7H8i9J0k", "get_weather"),
    ]
    assert "".join(d.arguments for d in deltas if d.index == 0) == '{"city": "Paris"}'
    assert "".join(d.arguments for d in deltas if d.index == 1) == '{"city":"Tokyo"}'


async def test_a_refusal_streams_no_text_and_ends_refused() -> None:
    items, _ = await stream_once(sse_reply("openai", "stream_refusal"))
    assert items == [
        LLMResponse(
            usage=Usage(input_tokens=19, output_tokens=10),
            finish_reason=FinishReason.REFUSED,
            refusal="I'm sorry, but I can't help with that.",
            response_id="chatcmpl-CJ1stream",
            response_model="gpt-4.1-mini-2025-04-14",
            provider_finish_reason="stop",
        )
    ]


RECORDED = ["text", "tool_call", "tool_calls", "refusal", "content_filter", "malformed_arguments"]


@pytest.mark.parametrize("name", RECORDED)
@pytest.mark.parametrize("style", ["openai", "whole", "index_first_only", "interleaved", "repeated"])
async def test_however_the_server_cuts_the_answer_the_stream_ends_with_what_chat_reads(
    name: str, style: CallStyle
) -> None:
    body = completion(name)
    items, _ = await stream_once(streamed(openai_chunks(body, style=style), byte_slices=37))

    assert items[-1] == await chat_once(reply("openai", name))
    response = items[-1]
    assert isinstance(response, LLMResponse)
    assert "".join(texts(items)) == response.text
    for index, call in enumerate(response.tool_calls):
        assert (
            "".join(d.arguments for d in call_deltas(items) if d.index == index)
            == (
                body["choices"][0]["message"]["tool_calls"][index]["function"]["arguments"]  # as the model wrote them
            )
        )
        assert [(d.id, d.name) for d in call_deltas(items) if d.index == index and d.id] == [(call.id, call.name)]


async def test_calls_all_numbered_zero_are_told_apart_by_their_ids() -> None:
    items, _ = await stream_once(streamed(openai_chunks(completion("tool_calls"), style="all_index_zero")))
    assert items[-1] == await chat_once(reply("openai", "tool_calls"))
    assert [d.index for d in call_deltas(items)] == [0, 1]


async def test_a_legacy_function_call_streams_as_one_call_at_the_end() -> None:
    body = completion("text")
    body["id"] = "chatcmpl-legacy"
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    body["choices"][0]["finish_reason"] = "function_call"
    items, _ = await stream_once(streamed(openai_chunks(body)))

    assert items[-1] == await chat_once(httpx.Response(200, json=body))
    call_id = ToolCallId("call_chatcmpl-legacy_0")
    assert items[:-1] == [ToolCallDelta(index=0, id=call_id, name="get_weather", arguments='{"city": "Paris"}')]


CALL_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.mark.parametrize(
    "content", [CALL_TEXT, f"<tool_call>\n{CALL_TEXT}\n</tool_call>", f"```json\n{CALL_TEXT}\n```", f"\n {CALL_TEXT}"]
)
async def test_json_text_streams_as_the_calls_it_is_when_text_tool_calls_are_on(content: str) -> None:
    body = completion("text")
    body["choices"][0]["message"]["content"] = content
    items, _ = await stream_once(streamed(openai_chunks(body, text_piece=2)), llm_text_tool_calls=True)

    assert items[-1] == await chat_once(httpx.Response(200, json=body), llm_text_tool_calls=True)
    # held back while it could be calls, it never showed as text
    assert items[:-1] == [
        ToolCallDelta(index=0, id=ToolCallId(f"call_{body['id']}_0"), name="get_weather", arguments='{"city": "Paris"}')
    ]


async def test_with_text_tool_calls_on_prose_still_streams_as_it_comes() -> None:
    items, _ = await stream_once(sse_reply("openai", "stream_text"), llm_text_tool_calls=True)
    assert texts(items) == ["Paris", " is", " the", " capital", " of", " France", "."]


async def test_json_that_is_not_a_call_goes_out_whole_at_the_end() -> None:
    body = completion("text")
    body["choices"][0]["message"]["content"] = '{"weather": "sunny"}'
    items, _ = await stream_once(streamed(openai_chunks(body)), llm_text_tool_calls=True)
    assert items[:-1] == [TextDelta(text='{"weather": "sunny"}')]
    assert items[-1] == await chat_once(httpx.Response(200, json=body), llm_text_tool_calls=True)


async def test_a_stream_that_breaks_after_two_fragments_is_an_error_and_not_retried() -> None:
    broken = streamed(openai_chunks(completion("text")), break_after=3)  # the role chunk, then two pieces
    transport, sleeps = ReplayTransport([broken, sse_reply("openai", "stream_text")]), Sleeps()
    seen: Items = []
    with pytest.raises(LLMUnavailable, match=r"broke off after 2 fragments.*connection to openai broke") as caught:
        await read_into(seen, with_retries(openai_client(transport), sleeps).stream(CONVERSATION, [WEATHER]))

    assert texts(seen) == ["Paris ", "is the"]
    assert (caught.value.attempts, len(transport.requests), transport.remaining, sleeps.waits) == (1, 1, 1, [])
    assert body_of(broken).closed


@pytest.mark.parametrize("failure", ["rate_limited", "server_error"])
async def test_a_429_or_500_before_the_first_fragment_is_retried(failure: str) -> None:
    transport, sleeps = ReplayTransport([reply("openai", failure), sse_reply("openai", "stream_text")]), Sleeps()
    items = await collect(with_retries(openai_client(transport), sleeps))
    assert items[-1].attempts == 2  # type: ignore[union-attr]
    assert "".join(texts(items)) == "Paris is the capital of France."
    assert len(sleeps.waits) == 1


async def test_a_dropped_connection_before_the_first_fragment_is_retried() -> None:
    broken = streamed(openai_chunks(completion("text")), break_after=1)  # only the role chunk: no fragment yet
    transport = ReplayTransport([broken, sse_reply("openai", "stream_text")])
    items = await collect(with_retries(openai_client(transport), Sleeps()))
    assert items[-1].attempts == 2  # type: ignore[union-attr]


async def test_an_error_event_in_the_stream_is_transient_unless_it_blames_the_request() -> None:
    overloaded = {"error": {"message": "The server is overloaded.", "type": "server_error", "code": None}}
    transport = ReplayTransport([streamed([overloaded]), sse_reply("openai", "stream_text")])
    items = await collect(with_retries(openai_client(transport), Sleeps()))
    assert items[-1].attempts == 2  # type: ignore[union-attr]

    # vLLM reports a request it cannot serve this way, after answering 200
    too_long = {"object": "error", "message": "max_tokens is too large", "type": "BadRequestError", "code": 400}
    with pytest.raises(LLMRequestError, match="reported an error in its stream: max_tokens is too large"):
        await stream_once(streamed([{"error": too_long}]))


async def test_a_rejected_request_is_not_retried() -> None:
    transport = ReplayTransport([reply("openai", "bad_request")])
    with pytest.raises(LLMRequestError, match=r"rejected the request \(HTTP 400\): Invalid schema") as caught:
        await collect(with_retries(openai_client(transport), Sleeps()))
    assert caught.value.attempts == 1


async def test_a_stream_that_ends_without_a_finish_reason_is_transient() -> None:
    # closed cleanly after the last piece of text: no finish reason, no usage, no [DONE]
    cut = openai_chunks(completion("text"))[:-3]
    assert "finish_reason': 'stop'" in str(openai_chunks(completion("text"))[-3])
    with pytest.raises(LLMUnavailable, match="stream ended before the answer did"):
        await stream_once(streamed(cut))


async def test_an_event_that_is_not_json_is_transient() -> None:
    events = openai_chunks(completion("text"))
    with pytest.raises(LLMUnavailable, match="sent a stream event that is not JSON"):
        await stream_once(streamed([events[0], '{"choices": [{"delta": {"content": "Par', *events[1:]]))


async def test_a_consumer_that_stops_early_releases_the_connection() -> None:
    answer = sse_reply("openai", "stream_text")
    client = openai_client(ReplayTransport([answer]))
    stream = client.stream(CONVERSATION, [WEATHER])
    assert await anext(stream) == TextDelta(text="Paris")
    await stream.aclose()  # type: ignore[attr-defined]
    await client.aclose()
    assert body_of(answer).closed
