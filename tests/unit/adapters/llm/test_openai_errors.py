"""A provider error names what the server said, whatever shape its error body has; never the key."""

from typing import Any

import httpx
import pytest

from agentkit.application.errors import LLMError, LLMRequestError, LLMUnavailable
from tests.fixtures.llm.conversation import CONVERSATION, WEATHER
from tests.fixtures.llm.recorded import recorded
from tests.fixtures.llm.replay import ReplayTransport, openai_client

LOCAL = "http://127.0.0.1:8080/v1"
KEY = "sk-proj-Zq81mXv0aLr7T2c9Kd4e"


async def failure(answer: httpx.Response, **settings: Any) -> LLMError:
    client = openai_client(ReplayTransport([answer]), **({"llm_base_url": LOCAL} | settings))
    try:
        with pytest.raises(LLMError) as caught:
            await client.chat(CONVERSATION, [WEATHER])
    finally:
        await client.aclose()
    return caught.value


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        # vLLM: the error at the top level
        (
            httpx.Response(
                400,
                json={
                    "object": "error",
                    "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
            ),
            '(HTTP 400): "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        ),
        # FastAPI's own errors, as llama-cpp-python's server sends them
        (httpx.Response(422, json={"detail": "Model not loaded"}), "(HTTP 422): Model not loaded"),
        (
            httpx.Response(
                422,
                json={"detail": [{"loc": ["body", "messages", 2, "content"], "msg": "field required"}]},
            ),
            "(HTTP 422): body.messages.2.content: field required",
        ),
        # {"error": "..."}: the SDK hands over the bare string
        (httpx.Response(400, json={"error": "invalid tool schema"}), "(HTTP 400): invalid tool schema"),
        (
            httpx.Response(400, text="tools param requires --jinja flag"),
            "(HTTP 400): tools param requires --jinja flag",
        ),
        (httpx.Response(400), "(HTTP 400): no details given"),
    ],
)
async def test_the_servers_own_words_whatever_the_body(answer: httpx.Response, said: str) -> None:
    error = await failure(answer)
    assert isinstance(error, LLMRequestError)
    assert str(error) == f"the OpenAI-compatible server at {LOCAL} rejected the request {said}"


async def test_a_proxys_html_error_page_is_reduced_to_one_line_of_text() -> None:
    page = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body><h1>502 Bad Gateway</h1></body>\n</html>"
    error = await failure(httpx.Response(502, text=page, headers={"content-type": "text/html"}))
    assert isinstance(error, LLMUnavailable)
    assert str(error) == f"the OpenAI-compatible server at {LOCAL} answered HTTP 502: 502 Bad Gateway 502 Bad Gateway"


async def test_the_recorded_template_error_and_context_overflow_are_quoted() -> None:
    (_, template_error) = recorded("missing_content_500")
    error = await failure(template_error.reply())
    assert isinstance(error, LLMUnavailable)
    assert str(error).endswith("answered HTTP 500: 'dict object' has no attribute 'content'")

    overflow = recorded("calculator_until_context_overflow")[-1]
    error = await failure(overflow.reply())
    assert isinstance(error, LLMRequestError)
    assert "(HTTP 400): This model's maximum context length is 2048 tokens. However," in str(error)
    assert str(error).endswith(
        "the conversation no longer fits the model's context window (serve the model with a longer context, "
        "or shorten tool output with TOOL_OUTPUT_MAX_CHARS)"
    )


async def test_llama_cpp_servers_context_size_error_gets_the_same_hint() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
        }
    }
    error = await failure(httpx.Response(400, json=body))
    assert "exceeds the available context size" in str(error)
    assert "no longer fits the model's context window" in str(error)


async def test_a_message_that_quotes_the_key_has_it_taken_out() -> None:
    body = {"error": {"message": f"Project of key {KEY} has no access to model local", "code": "model_access"}}
    error = await failure(httpx.Response(403, json=body), openai_api_key=KEY)
    assert KEY not in str(error)
    assert "[redacted]" in str(error)
    # a key that is not ours but looks like one is cut too
    body = {"error": {"message": "Incorrect API key provided: sk-abcd1234efgh5678. Check it."}}
    error = await failure(httpx.Response(400, json=body))
    assert "sk-abcd1234efgh5678" not in str(error)
    assert "sk-abcd…[redacted]" in str(error)


async def test_the_server_is_named_without_credentials_or_query_in_its_url() -> None:
    url = "http://user:s3cret-pass@127.0.0.1:8080/v1?api-key=s3cret-query"
    error = await failure(httpx.Response(400, json={"error": {"message": "nope"}}), llm_base_url=url)
    assert (
        str(error) == "the OpenAI-compatible server at http://127.0.0.1:8080/v1 rejected the request (HTTP 400): nope"
    )
    assert "s3cret" not in str(error)


async def test_a_long_message_is_cut_after_the_key_is_taken_out() -> None:
    # the key sits where shortening would cut it in half; the half must not survive either
    key = "gw_live_9f8e7d6c5b4a3f2e1d0c"  # a gateway's key: nothing marks it as one but the setting
    message = "x" * 285 + f" {key} and more"
    error = await failure(httpx.Response(400, json={"error": {"message": message}}), openai_api_key=key)
    assert key[:10] not in str(error)
    assert len(str(error)) < 400
