"""The OpenAI adapter through the real `openai` SDK, on a transport replaying recorded answers."""

from typing import Any

import httpx
import pytest

from agentkit.adapters.llm.openai_client import OpenAILLMClient
from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.application.errors import ConfigurationError, LLMRequestError, LLMUnavailable
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.entrypoints.wiring.settings import load_settings
from tests.fixtures.llm.conversation import CONVERSATION, WEATHER, Sleeps
from tests.fixtures.llm.replay import ReplayTransport, Reply, openai_client, replies, reply


def with_retries(client: OpenAILLMClient, sleeps: Sleeps, max_retries: int = 3) -> RetryingLLMClient:
    policy = RetryPolicy(max_retries=max_retries, base_s=1.0, cap_s=20.0, attempt_timeout_s=5.0)
    return RetryingLLMClient(client, policy, sleep=sleeps, rand=lambda: 0.5)


async def chat_once(
    *answers: Reply, messages: list[Message] | None = None, **settings: Any
) -> tuple[LLMResponse, ReplayTransport]:
    transport = ReplayTransport(answers)
    client = openai_client(transport, **settings)
    try:
        response = await client.chat(messages or CONVERSATION, [WEATHER])
    finally:
        await client.aclose()
    return response, transport


async def test_plain_text_and_the_request_the_sdk_sent() -> None:
    response, transport = await chat_once(reply("openai", "text"), llm_temperature=0.2, llm_max_tokens=256)

    assert response == LLMResponse(
        text="Paris is the capital of France.",
        usage=Usage(input_tokens=24, output_tokens=8),
        finish_reason=FinishReason.STOP,
        # the provider's own metadata, kept for the trace
        response_id="chatcmpl-CJ1text",
        response_model="gpt-4.1-mini-2025-04-14",
        provider_finish_reason="stop",
    )
    (request,) = transport.requests
    assert (request.method, str(request.url)) == ("POST", "https://api.openai.com/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer test-key"
    assert transport.bodies()[0] == {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "You are a weather assistant."},
            {"role": "user", "content": "What is the weather in Paris?"},
        ],
        "temperature": 0.2,
        "max_completion_tokens": 256,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The current weather in a city.",
                    "parameters": WEATHER.parameters,
                },
            }
        ],
        "tool_choice": "auto",
    }


@pytest.mark.parametrize("parallel", [False, True])
async def test_parallel_tool_calls_is_sent_only_when_set(parallel: bool) -> None:
    # unset (the test above), the request leaves the field out and the provider's default holds
    _, transport = await chat_once(reply("openai", "text"), llm_parallel_tool_calls=parallel)

    assert transport.bodies()[0]["parallel_tool_calls"] is parallel


async def test_no_tools_means_no_tools_field_and_no_tool_choice() -> None:
    transport = ReplayTransport([reply("openai", "text")])
    client = openai_client(transport)
    await client.chat(CONVERSATION, [])
    await client.aclose()
    assert "tools" not in transport.bodies()[0]
    assert "tool_choice" not in transport.bodies()[0]
    assert "parallel_tool_calls" not in transport.bodies()[0]
    assert "temperature" not in transport.bodies()[0]


async def test_one_tool_call() -> None:
    response, _ = await chat_once(reply("openai", "tool_call"))
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.tool_calls == (
        ToolCall(id=ToolCallId("call_Wx3pL9kQ2mZ"), name="get_weather", arguments={"city": "Paris", "unit": "celsius"}),
    )
    assert response.usage == Usage(input_tokens=88, output_tokens=21)


async def test_several_tool_calls_in_one_turn_keep_their_order_and_ids() -> None:
    response, _ = await chat_once(reply("openai", "tool_calls"))
    assert [(call.id, call.arguments["city"]) for call in response.tool_calls] == [
        ("call_A1b2C3d4E5f", "Paris"),
        ("call_F6g7H8i9J0k", "Tokyo"),
    ]


async def test_tool_calls_and_results_go_back_by_call_id_in_order() -> None:
    transport = ReplayTransport(replies("openai", "tool_calls", "after_tool"))
    client = openai_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    history = [
        *CONVERSATION,
        first.to_message(),
        Message(role="tool", content="18 °C, cloudy", tool_call_id=first.tool_calls[0].id, name="get_weather"),
        Message(role="tool", content="24 °C, sunny", tool_call_id=first.tool_calls[1].id, name="get_weather"),
    ]
    second = await client.chat(history, [WEATHER])
    await client.aclose()

    assert second.text == "It is 18 °C in Paris."
    paris = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    tokyo = {"name": "get_weather", "arguments": '{"city": "Tokyo"}'}
    assert transport.bodies()[1]["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_A1b2C3d4E5f", "type": "function", "function": paris},
                {"id": "call_F6g7H8i9J0k", "type": "function", "function": tokyo},
            ],
        },
        {"role": "tool", "tool_call_id": "call_A1b2C3d4E5f", "content": "18 °C, cloudy"},
        {"role": "tool", "tool_call_id": "call_F6g7H8i9J0k", "content": "24 °C, sunny"},
    ]


async def test_a_refusal_maps_to_refused() -> None:
    response, _ = await chat_once(reply("openai", "refusal"))
    assert response.finish_reason is FinishReason.REFUSED
    assert response.refusal == "I'm sorry, but I can't help with that."
    assert response.text == ""


async def test_a_content_filter_stop_is_a_refusal_too() -> None:
    response, _ = await chat_once(reply("openai", "content_filter"))
    assert response.finish_reason is FinishReason.REFUSED
    assert response.refusal is not None
    assert "content filter" in response.refusal


async def test_malformed_tool_arguments_become_an_error_the_model_can_see_and_are_echoed_as_sent() -> None:
    transport = ReplayTransport(replies("openai", "malformed_arguments", "after_tool"))
    client = openai_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    (call,) = first.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {})
    assert call.arguments_error is not None
    assert "Unterminated string" in call.arguments_error

    error = Message(role="tool", content="ERROR: bad arguments", tool_call_id=call.id, name=call.name)
    await client.chat([*CONVERSATION, first.to_message(), error], [WEATHER])
    await client.aclose()
    echoed = transport.bodies()[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert echoed == '{"city": "Par'


async def test_429_then_success_waits_as_the_server_asks() -> None:
    transport, sleeps = ReplayTransport(replies("openai", "rate_limited", "text")), Sleeps()
    response = await with_retries(openai_client(transport), sleeps).chat(CONVERSATION, [])
    assert (response.text, response.attempts) == ("Paris is the capital of France.", 2)
    assert sleeps.waits == [0.12]  # retry-after-ms: 120
    assert len(transport.requests) == 2


async def test_500_until_the_retries_run_out() -> None:
    transport, sleeps = ReplayTransport(replies("openai", *["server_error"] * 3)), Sleeps()
    with pytest.raises(LLMUnavailable, match=r"after 3 attempts: openai answered HTTP 500") as caught:
        await with_retries(openai_client(transport), sleeps, max_retries=2).chat(CONVERSATION, [])
    assert caught.value.attempts == 3
    assert len(transport.requests) == 3
    assert sleeps.waits == [0.5, 1.0]


async def test_the_sdk_does_not_retry_on_its_own() -> None:
    transport = ReplayTransport(replies("openai", "server_error", "text"))
    with pytest.raises(LLMUnavailable):
        await with_retries(openai_client(transport), Sleeps(), max_retries=0).chat(CONVERSATION, [])
    assert (len(transport.requests), transport.remaining) == (1, 1)


async def test_400_is_not_retried_and_says_why() -> None:
    transport = ReplayTransport(replies("openai", "bad_request", "text"))
    with pytest.raises(LLMRequestError, match=r"rejected the request \(HTTP 400\): Invalid schema") as caught:
        await with_retries(openai_client(transport), Sleeps()).chat(CONVERSATION, [WEATHER])
    assert caught.value.attempts == 1
    assert len(transport.requests) == 1


async def test_401_names_the_variable_and_not_the_key() -> None:
    transport = ReplayTransport(replies("openai", "unauthorized"))
    with pytest.raises(LLMRequestError) as caught:
        await with_retries(openai_client(transport), Sleeps()).chat(CONVERSATION, [])
    assert "rejected the API key (HTTP 401); check OPENAI_API_KEY" in str(caught.value)
    assert "sk-" not in str(caught.value)


async def test_a_used_up_quota_is_not_retried_although_it_is_a_429() -> None:
    transport = ReplayTransport(replies("openai", "insufficient_quota", "text"))
    with pytest.raises(LLMRequestError, match="quota is used up"):
        await with_retries(openai_client(transport), Sleeps()).chat(CONVERSATION, [])
    assert len(transport.requests) == 1


async def test_an_unknown_model_points_at_the_settings() -> None:
    with pytest.raises(LLMRequestError, match=r"HTTP 404.*check LLM_MODEL and LLM_BASE_URL"):
        await chat_once(reply("openai", "model_not_found"))


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (httpx.ReadTimeout("read timed out"), "did not answer in time"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "could not reach openai"),
        (httpx.RemoteProtocolError("Server disconnected without sending a response."), "could not reach openai"),
    ],
)
async def test_timeouts_and_dropped_connections_are_retried(failure: Exception, message: str) -> None:
    transport, sleeps = ReplayTransport([failure, reply("openai", "text")]), Sleeps()
    with pytest.raises(LLMUnavailable, match=message):
        await openai_client(transport).chat(CONVERSATION, [])  # one attempt, as the adapter itself
    transport = ReplayTransport([failure, reply("openai", "text")])
    response = await with_retries(openai_client(transport), sleeps).chat(CONVERSATION, [])
    assert response.attempts == 2


async def test_a_completion_without_choices_is_transient() -> None:
    empty = httpx.Response(
        200, json={"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    )
    with pytest.raises(LLMUnavailable, match="without choices"):
        await chat_once(empty)


async def test_a_compatible_server_gets_its_url_and_the_classic_token_limit() -> None:
    response, transport = await chat_once(
        reply("openai", "text"), llm_base_url="http://127.0.0.1:8080/v1", llm_model="qwen2.5:7b", llm_max_tokens=64
    )
    assert response.text
    assert str(transport.requests[0].url) == "http://127.0.0.1:8080/v1/chat/completions"
    body = transport.bodies()[0]
    assert (body["model"], body["max_tokens"]) == ("qwen2.5:7b", 64)
    assert "max_completion_tokens" not in body


async def test_a_compatible_server_that_says_stop_while_calling_tools_still_calls_them() -> None:
    answer = reply("openai", "tool_call")
    body = answer.json()
    body["choices"][0]["finish_reason"] = "stop"
    response, _ = await chat_once(httpx.Response(200, json=body))
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert len(response.tool_calls) == 1


def _turn_with_a_call() -> list[Message]:
    call = ToolCall(id=ToolCallId("call_1"), name="get_weather", arguments={"city": "Paris"})
    return [
        *CONVERSATION,
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="18 °C", tool_call_id=call.id, name=call.name),
    ]


@pytest.mark.parametrize(
    ("setting", "content"),
    [(None, {"content": ""}), ("empty", {"content": ""}), ("null", {"content": None}), ("omit", {})],
)
async def test_a_tool_calling_message_without_text_carries_the_configured_content(
    setting: str | None, content: dict[str, Any]
) -> None:
    _, transport = await chat_once(
        reply("openai", "after_tool"), messages=_turn_with_a_call(), llm_tool_call_content=setting
    )
    assistant = transport.bodies()[0]["messages"][2]
    assert assistant == {
        "role": "assistant",
        **content,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    }


async def test_text_beside_tool_calls_is_sent_whatever_the_setting() -> None:
    call = ToolCall(id=ToolCallId("call_1"), name="get_weather", arguments={"city": "Paris"})
    history = [*CONVERSATION, Message(role="assistant", content="Let me look.", tool_calls=(call,))]
    _, transport = await chat_once(reply("openai", "after_tool"), messages=history, llm_tool_call_content="omit")
    assert transport.bodies()[0]["messages"][2]["content"] == "Let me look."


def test_an_unknown_tool_call_content_setting_stops_start_up_naming_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="LLM_TOOL_CALL_CONTENT"):
        load_settings({"LLM_TOOL_CALL_CONTENT": "blank"})
    assert load_settings({"LLM_TOOL_CALL_CONTENT": "null"}).llm.llm_tool_call_content == "null"
    assert load_settings({"LLM_TEXT_TOOL_CALLS": "true"}).llm.llm_text_tool_calls is True
    with pytest.raises(ConfigurationError, match="LLM_TEXT_TOOL_CALLS"):
        load_settings({"LLM_TEXT_TOOL_CALLS": "sometimes"})


async def test_a_legacy_function_call_is_a_tool_call_and_goes_back_as_one() -> None:
    body = reply("openai", "text").json()
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    body["choices"][0]["finish_reason"] = "function_call"
    transport = ReplayTransport([httpx.Response(200, json=body), reply("openai", "after_tool")])
    client = openai_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    result = Message(role="tool", content="18 °C", tool_call_id=first.tool_calls[0].id, name="get_weather")
    await client.chat([*CONVERSATION, first.to_message(), result], [WEATHER])
    await client.aclose()

    call_id = f"call_{body['id']}_0"
    assert first.tool_calls == (ToolCall(id=ToolCallId(call_id), name="get_weather", arguments={"city": "Paris"}),)
    assert first.finish_reason is FinishReason.TOOL_CALLS
    assert transport.bodies()[1]["messages"][2]["tool_calls"][0]["id"] == call_id


async def test_structured_tool_calls_win_over_the_legacy_field_beside_them() -> None:
    # llama-cpp-python sends both, the legacy name with a stray colon ("read_file:"), recorded
    body = reply("openai", "tool_call").json()
    body["choices"][0]["message"]["function_call"] = {"name": "get_weather:", "arguments": "{}"}
    response, _ = await chat_once(httpx.Response(200, json=body))
    assert [call.name for call in response.tool_calls] == ["get_weather"]


async def test_json_text_is_an_answer_unless_text_tool_calls_are_on() -> None:
    body = reply("openai", "text").json()
    body["choices"][0]["message"]["content"] = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    off, _ = await chat_once(httpx.Response(200, json=body))
    assert (off.text, off.tool_calls, off.finish_reason) == (
        body["choices"][0]["message"]["content"],
        (),
        FinishReason.STOP,
    )

    on, _ = await chat_once(httpx.Response(200, json=body), llm_text_tool_calls=True)
    assert on.text == ""
    assert on.finish_reason is FinishReason.TOOL_CALLS
    (call,) = on.tool_calls
    assert (call.id, call.name, call.arguments) == (f"call_{body['id']}_0", "get_weather", {"city": "Paris"})
    assert call.provider_data == {"openai_text_tool_call": True}


async def test_text_tool_calls_only_name_the_tools_of_this_request() -> None:
    body = reply("openai", "text").json()
    body["choices"][0]["message"]["content"] = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    transport = ReplayTransport([httpx.Response(200, json=body)])
    client = openai_client(transport, llm_text_tool_calls=True)
    response = await client.chat(CONVERSATION, [])  # no tools offered: it is an answer
    await client.aclose()
    assert response.tool_calls == ()
    assert response.text.startswith('{"name"')


async def test_arguments_with_raw_newlines_are_parsed_and_go_back_escaped() -> None:
    body = reply("openai", "tool_call").json()
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Paris\n(France)"}'
    transport = ReplayTransport([httpx.Response(200, json=body), reply("openai", "after_tool")])
    client = openai_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    (call,) = first.tool_calls
    result = Message(role="tool", content="18 °C", tool_call_id=call.id, name=call.name)
    await client.chat([*CONVERSATION, first.to_message(), result], [WEATHER])
    await client.aclose()

    assert (call.arguments, call.arguments_error) == ({"city": "Paris\n(France)"}, None)
    echoed = transport.bodies()[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert echoed == '{"city": "Paris\\n(France)"}'
