"""The Anthropic adapter through its SDK: what goes on the wire, and how errors and odd streams come back.

The SDK sends through an `httpx2.MockTransport` (its HTTP library) answering as Anthropic's API
does; the conformance suite covers the port's promises on a loopback fake
(tests/contract/test_llm_conformance.py).
"""

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from agentkit.adapters.llm.anthropic_client import DEFAULT_MAX_TOKENS, AnthropicLLMClient
from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.adapters.llm.factory import build_llm_client
from agentkit.adapters.llm.retry import RetryingLLMClient
from agentkit.application.errors import LLMRequestError
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.wiring.settings import load_settings

KEY = "sk-ant-test-0123456789abcdef"
CALC = ToolSchema(
    name="calculator",
    description="Arithmetic.",
    parameters={"type": "object", "properties": {"expression": {"type": "string"}}},
)
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-5-5",
    "content": [{"type": "text", "text": "391"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5},
}

Handler = Callable[[httpx2.Request], httpx2.Response]


def client(handler: Handler, **settings: Any) -> AnthropicLLMClient:
    config = load_settings({}, llm_provider="anthropic", anthropic_api_key=KEY, **settings).llm
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return AnthropicLLMClient.from_config(config, http_client=http)


def answering(status: int, body: Any, sent: list[Any] | None = None, headers: dict[str, str] | None = None) -> Handler:
    def handle(request: httpx2.Request) -> httpx2.Response:
        if sent is not None:
            sent.append(json.loads(request.content))
        return httpx2.Response(status, json=body, headers=headers)

    return handle


def sse(*events: tuple[str, dict[str, Any]]) -> Handler:
    text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return lambda request: httpx2.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})


CALL = ToolCall(id=ToolCallId("toolu_1"), name="calculator", arguments={"expression": "17 * 23"})
CALL_2 = ToolCall(id=ToolCallId("toolu_2"), name="calculator", arguments={"expression": "1 / 0"})
HISTORY = [
    Message(role="system", content="Be exact."),
    Message(role="user", content="17 * 23 and 1 / 0?"),
    Message(role="assistant", content="", tool_calls=(CALL, CALL_2)),
    Message(role="tool", content="391", tool_call_id=CALL.id, name="calculator"),
    Message(role="tool", content="ERROR: division by zero", tool_call_id=CALL_2.id, name="calculator", is_error=True),
]


async def test_the_request_carries_system_tools_results_and_cache_breakpoints() -> None:
    sent: list[Any] = []
    llm = client(answering(200, MESSAGE, sent))
    response = await llm.chat(HISTORY, [CALC])
    await llm.aclose()

    (body,) = sent
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["system"] == [{"type": "text", "text": "Be exact.", "cache_control": {"type": "ephemeral"}}]
    assert body["tools"] == [
        {
            "name": "calculator",
            "description": "Arithmetic.",
            "input_schema": CALC.parameters,
            "cache_control": {"type": "ephemeral"},
        }
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [  # no empty text block: Anthropic rejects one
        {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "17 * 23"}},
        {"type": "tool_use", "id": "toolu_2", "name": "calculator", "input": {"expression": "1 / 0"}},
    ]
    assert body["messages"][2]["content"] == [  # both results in one user message, the last block cached
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "391"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": "ERROR: division by zero",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]
    # input counts the cached tokens too, as the other providers count them
    assert response.usage == Usage(input_tokens=115, output_tokens=2, cache_read_tokens=100, cache_write_tokens=5)


async def test_settings_set_the_token_limit_and_temperature_and_can_turn_caching_off() -> None:
    sent: list[Any] = []
    llm = client(answering(200, MESSAGE, sent), llm_max_tokens=256, llm_temperature=0.2, llm_prompt_caching=False)
    await llm.chat(HISTORY, [CALC])
    await llm.aclose()

    (body,) = sent
    assert (body["max_tokens"], body["temperature"]) == (256, 0.2)
    assert "cache_control" not in json.dumps(body)
    assert llm.parameters == {"max_tokens": 256, "temperature": 0.2}


@pytest.mark.parametrize("status", [429, 500, 503, 529])
async def test_rate_limits_overloads_and_server_errors_are_transient_with_their_retry_after(status: int) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    llm = client(answering(status, body, headers={"retry-after": "7"}))
    with pytest.raises(ProviderUnavailable, match=f"Anthropic answered HTTP {status}: Overloaded") as raised:
        await llm.chat(HISTORY, [CALC])
    await llm.aclose()
    assert (raised.value.retry_after_s, raised.value.status) == (7.0, status)


@pytest.mark.parametrize(
    ("status", "kind", "message", "expected"),
    [
        (400, "invalid_request_error", "messages.1: tool_use ids must be unique", "tool_use ids must be unique"),
        (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "context window"),
        (401, "authentication_error", f"invalid x-api-key {KEY}", "check ANTHROPIC_API_KEY"),
        (404, "not_found_error", "model: claude-nope", "check LLM_MODEL"),
    ],
)
async def test_rejected_requests_say_why_and_never_show_the_key(
    status: int, kind: str, message: str, expected: str
) -> None:
    llm = client(answering(status, {"type": "error", "error": {"type": kind, "message": message}}))
    with pytest.raises(LLMRequestError, match=expected) as raised:
        await llm.chat(HISTORY, [CALC])
    await llm.aclose()
    assert KEY not in str(raised.value)


START = ("message_start", {"type": "message_start", "message": {**MESSAGE, "content": [], "stop_reason": None}})
TEXT = (
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)


def text_delta(text: str) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }


@pytest.mark.parametrize(
    ("kind", "error"), [("overloaded_error", ProviderUnavailable), ("invalid_request_error", LLMRequestError)]
)
async def test_an_error_event_in_the_stream_is_judged_by_its_type(kind: str, error: type[Exception]) -> None:
    failure = ("error", {"type": "error", "error": {"type": kind, "message": "went wrong"}})
    llm = client(sse(START, TEXT, text_delta("3"), failure))
    with pytest.raises(error, match="went wrong"):
        [item async for item in llm.stream(HISTORY, [CALC])]
    await llm.aclose()


async def test_a_stream_that_ends_without_a_stop_reason_is_not_taken_for_a_whole_answer() -> None:
    llm = client(sse(START, TEXT, text_delta("39")))
    with pytest.raises(ProviderUnavailable, match="no stop_reason"):
        [item async for item in llm.stream(HISTORY, [CALC])]
    await llm.aclose()


async def test_thinking_blocks_stay_out_and_a_call_without_input_streams_its_empty_object() -> None:
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    events = (
        START,
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": thinking}),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_9", "name": "now", "input": {}},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    llm = client(sse(*events))
    *fragments, response = [item async for item in llm.stream(HISTORY, [CALC])]
    await llm.aclose()
    assert isinstance(response, LLMResponse)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("toolu_9", "now", {})]
    assert [(f.index, f.id, f.arguments) for f in fragments] == [(0, "toolu_9", "{}")]  # type: ignore[union-attr]
    assert response.usage.output_tokens == 9
    assert response.usage.cache_read_tokens == 100  # from message_start, which message_delta did not restate


def test_llm_provider_anthropic_builds_the_adapter_under_the_retry_policy() -> None:
    config = load_settings({}, llm_provider="anthropic", anthropic_api_key=KEY).llm
    built = build_llm_client(config)
    assert isinstance(built, RetryingLLMClient)
    assert isinstance(built.inner, AnthropicLLMClient)
    assert (built.provider, built.model) == ("anthropic", "claude-sonnet-5-5")
