"""The Gemini adapter through the real `google-genai` SDK, on a transport replaying recorded answers."""

import base64
from typing import Any

import httpx
import pytest

from agentkit.adapters.llm.gemini_client import GeminiLLMClient
from agentkit.adapters.llm.gemini_translate import SYNTHETIC_ID_KEY, TEXT_SIGNATURE_KEY, THOUGHT_SIGNATURE_KEY
from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.domain.messages import FinishReason, LLMResponse, Message, Usage
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.conversation import CONVERSATION, WEATHER, Sleeps
from tests.fixtures.llm.replay import ReplayTransport, Reply, gemini_client, replies, reply

SIGNATURE = "CiQB0e2Kb3Y8hX4o9m1nq6n8GkY2cI0l4a5pQv2vYt9Wn1s3cYgSKwHR7YpJ8mR3xqZ2fGmC0sWlOwE1dHk7p9a6cK2u"


def with_retries(client: GeminiLLMClient, sleeps: Sleeps, max_retries: int = 3) -> RetryingLLMClient:
    policy = RetryPolicy(max_retries=max_retries, base_s=1.0, cap_s=20.0, attempt_timeout_s=5.0)
    return RetryingLLMClient(client, policy, sleep=sleeps, rand=lambda: 0.5)


async def chat_once(
    *answers: Reply, tools: list[ToolSchema] | None = None, **settings: Any
) -> tuple[LLMResponse, ReplayTransport]:
    transport = ReplayTransport(answers)
    client = gemini_client(transport, **settings)
    try:
        response = await client.chat(CONVERSATION, [WEATHER] if tools is None else tools)
    finally:
        await client.aclose()
    return response, transport


async def test_plain_text_and_the_request_the_sdk_sent() -> None:
    response, transport = await chat_once(reply("gemini", "text"), llm_temperature=0.2, llm_max_tokens=256)

    assert response.text == "Paris is the capital of France."
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == Usage(input_tokens=12, output_tokens=8 + 41)  # thinking tokens are output
    assert response.provider_data is not None
    assert response.provider_data[TEXT_SIGNATURE_KEY].startswith("CiAB0e2K")
    (request,) = transport.requests
    assert request.url.path.endswith("/models/gemini-2.5-flash:generateContent")
    assert request.headers["x-goog-api-key"] == "test-key"
    body = transport.bodies()[0]
    assert body["systemInstruction"]["parts"] == [{"text": "You are a weather assistant."}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}]
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 256}
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["description"] == "The current weather in a city."
    assert declaration["parameters_json_schema"] == WEATHER.parameters  # the neutral JSON schema, as is


async def test_no_tools_means_no_tools_field() -> None:
    _, transport = await chat_once(reply("gemini", "text"), tools=[])
    assert "tools" not in transport.bodies()[0]


async def test_one_tool_call_keeps_its_thought_signature() -> None:
    response, _ = await chat_once(reply("gemini", "tool_call"))
    assert response.finish_reason is FinishReason.TOOL_CALLS
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris", "unit": "celsius"})
    assert call.id  # Gemini gave none: the adapter made one up
    assert call.provider_data == {THOUGHT_SIGNATURE_KEY: SIGNATURE, SYNTHETIC_ID_KEY: True}
    assert response.usage == Usage(input_tokens=71, output_tokens=18 + 64)


async def test_the_next_turn_echoes_the_call_with_its_signature_and_answers_it_by_name() -> None:
    transport = ReplayTransport(replies("gemini", "tool_call", "after_tool"))
    client = gemini_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    (call,) = first.tool_calls
    result = Message(role="tool", content="18 °C, cloudy", tool_call_id=call.id, name=call.name)
    second = await client.chat([*CONVERSATION, first.to_message(), result], [WEATHER])
    await client.aclose()

    assert second.text == "It is 18 °C in Paris."
    contents = transport.bodies()[1]["contents"]
    assert [content["role"] for content in contents] == ["user", "model", "user"]
    call_part = {"functionCall": {"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}}}
    assert contents[1]["parts"] == [call_part | {"thoughtSignature": SIGNATURE}]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"result": "18 °C, cloudy"}}}
    ]  # the made-up id is never sent to Gemini


async def test_a_call_id_from_gemini_goes_back_with_the_call_and_its_response() -> None:
    transport = ReplayTransport(replies("gemini", "tool_call_with_id", "after_tool"))
    client = gemini_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    assert first.tool_calls[0].id == "fc_7q2kd0rm"
    result = Message(role="tool", content="18 °C", tool_call_id=first.tool_calls[0].id)  # no name: found by id
    await client.chat([*CONVERSATION, first.to_message(), result], [WEATHER])
    await client.aclose()
    model, answer = transport.bodies()[1]["contents"][1:]
    assert model["parts"][0]["functionCall"]["id"] == "fc_7q2kd0rm"
    assert answer["parts"][0]["functionResponse"] == {
        "id": "fc_7q2kd0rm",
        "name": "get_weather",
        "response": {"result": "18 °C"},
    }


async def test_several_calls_in_one_turn_are_answered_in_one_user_turn_in_order() -> None:
    transport = ReplayTransport(replies("gemini", "tool_calls", "after_tool"))
    client = gemini_client(transport)
    first = await client.chat(CONVERSATION, [WEATHER])
    assert [call.arguments["city"] for call in first.tool_calls] == ["Paris", "Tokyo"]
    assert len({call.id for call in first.tool_calls}) == 2
    # Gemini signs only the first of parallel calls.
    assert [THOUGHT_SIGNATURE_KEY in (call.provider_data or {}) for call in first.tool_calls] == [True, False]
    results = [
        Message(role="tool", content=f"{city}: fine", tool_call_id=call.id, name=call.name)
        for call, city in zip(first.tool_calls, ["Paris", "Tokyo"], strict=True)
    ]
    await client.chat([*CONVERSATION, first.to_message(), *results], [WEATHER])
    await client.aclose()

    contents = transport.bodies()[1]["contents"]
    assert [content["role"] for content in contents] == ["user", "model", "user"]
    assert ["thoughtSignature" in part for part in contents[1]["parts"]] == [True, False]
    assert [part["functionResponse"]["response"]["result"] for part in contents[2]["parts"]] == [
        "Paris: fine",
        "Tokyo: fine",
    ]


async def test_the_text_signature_goes_back_on_the_assistant_text() -> None:
    transport = ReplayTransport(replies("gemini", "text", "after_tool"))
    client = gemini_client(transport)
    first = await client.chat(CONVERSATION, [])
    await client.chat([*CONVERSATION, first.to_message(), Message(role="user", content="And Tokyo?")], [])
    await client.aclose()
    model = transport.bodies()[1]["contents"][1]
    expected = base64.b64decode(first.provider_data[TEXT_SIGNATURE_KEY]) if first.provider_data else b""
    assert model["parts"][0]["text"] == "Paris is the capital of France."
    assert base64.b64decode(model["parts"][0]["thoughtSignature"]) == expected


async def test_a_safety_block_is_a_refusal() -> None:
    response, _ = await chat_once(reply("gemini", "safety_block"))
    assert response.finish_reason is FinishReason.REFUSED
    assert response.refusal == "Gemini blocked the answer (SAFETY)"


async def test_a_blocked_prompt_is_a_refusal() -> None:
    response, _ = await chat_once(reply("gemini", "prompt_blocked"))
    assert response.finish_reason is FinishReason.REFUSED
    assert response.refusal == (
        "Gemini blocked the prompt (PROHIBITED_CONTENT): "
        "The prompt was blocked because it may contain prohibited content."
    )
    assert response.usage.input_tokens == 15


async def test_a_malformed_function_call_is_sampled_again() -> None:
    transport, sleeps = ReplayTransport(replies("gemini", "malformed_function_call", "tool_call")), Sleeps()
    response = await with_retries(gemini_client(transport), sleeps).chat(CONVERSATION, [WEATHER])
    assert (response.attempts, len(response.tool_calls)) == (2, 1)


async def test_429_then_success_waits_as_gemini_asks_in_the_body() -> None:
    transport, sleeps = ReplayTransport(replies("gemini", "rate_limited", "text")), Sleeps()
    response = await with_retries(gemini_client(transport), sleeps).chat(CONVERSATION, [])
    assert (response.text, response.attempts) == ("Paris is the capital of France.", 2)
    assert sleeps.waits == [7.0]  # RetryInfo.retryDelay "7s"


async def test_a_retry_after_header_wins_over_the_body() -> None:
    limited = reply("gemini", "rate_limited")
    limited.headers["retry-after"] = "3"
    transport, sleeps = ReplayTransport([limited, reply("gemini", "text")]), Sleeps()
    await with_retries(gemini_client(transport), sleeps).chat(CONVERSATION, [])
    assert sleeps.waits == [3.0]


async def test_503_until_the_retries_run_out() -> None:
    transport, sleeps = ReplayTransport(replies("gemini", *["server_error"] * 4)), Sleeps()
    with pytest.raises(LLMUnavailable, match=r"after 4 attempts: Gemini answered HTTP 503 UNAVAILABLE") as caught:
        await with_retries(gemini_client(transport), sleeps).chat(CONVERSATION, [])
    assert caught.value.attempts == 4
    assert len(transport.requests) == 4
    assert sleeps.waits == [0.5, 1.0, 2.0]


async def test_the_sdk_does_not_retry_on_its_own() -> None:
    transport = ReplayTransport(replies("gemini", "server_error", "text"))
    with pytest.raises(LLMUnavailable):
        await with_retries(gemini_client(transport), Sleeps(), max_retries=0).chat(CONVERSATION, [])
    assert (len(transport.requests), transport.remaining) == (1, 1)


async def test_400_is_not_retried_and_says_why() -> None:
    transport = ReplayTransport(replies("gemini", "bad_request", "text"))
    with pytest.raises(LLMRequestError, match=r"rejected the request \(HTTP 400 INVALID_ARGUMENT\): \* Generate"):
        await with_retries(gemini_client(transport), Sleeps()).chat(CONVERSATION, [WEATHER])
    assert len(transport.requests) == 1


@pytest.mark.parametrize("fixture", ["invalid_key", "unauthenticated"])
async def test_a_bad_key_names_the_variable(fixture: str) -> None:
    with pytest.raises(LLMRequestError, match=r"Gemini rejected the API key \(HTTP 40\d .*\); check GEMINI_API_KEY"):
        await chat_once(reply("gemini", fixture))


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (httpx.ReadTimeout("read timed out"), "Gemini did not answer in time"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "could not reach Gemini: ConnectError"),
    ],
)
async def test_timeouts_and_dropped_connections_are_retried(failure: Exception, message: str) -> None:
    with pytest.raises(LLMUnavailable, match=message):
        await chat_once(failure)
    transport = ReplayTransport([failure, reply("gemini", "text")])
    response = await with_retries(gemini_client(transport), Sleeps()).chat(CONVERSATION, [])
    assert response.attempts == 2


async def test_llm_base_url_points_the_sdk_elsewhere_and_the_timeout_reaches_the_server() -> None:
    _, transport = await chat_once(
        reply("gemini", "text"), llm_base_url="http://127.0.0.1:9000/", llm_request_timeout_s=12.5
    )
    url = transport.requests[0].url
    assert (url.host, url.port) == ("127.0.0.1", 9000)
    assert transport.requests[0].headers["x-server-timeout"] == "13"  # the SDK rounds up to seconds
