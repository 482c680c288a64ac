"""A calculator run through the HTTP API, with LLM_PROVIDER=anthropic against a loopback Messages fake.

The composition root builds the Anthropic client from the settings, as in production; the fake
(`agentkit.testing.llm_conformance.AnthropicWire`) speaks the Messages API and plays its prompt
cache, so the run's second model call reads the first call's prefix from the cache and the trace
shows it, priced.
"""

from collections.abc import AsyncIterator

import pytest

from agentkit.testing.llm_conformance import AnthropicWire, FakeCall, LoopbackLLMServer, Reply
from tests.http_fixtures import ApiFactory, headers

CALCULATE = FakeCall(id="toolu_01", name="calculator", arguments={"expression": "17 * 23"})


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """On in-memory state, and on the test database (the cache tokens are columns of its steps)."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


@pytest.fixture
async def anthropic_fake() -> AsyncIterator[LoopbackLLMServer]:
    answers = [Reply(calls=(CALCULATE,), usage=None), Reply(text="17 * 23 = 391", usage=None)]
    async with LoopbackLLMServer(AnthropicWire(), answers) as server:
        yield server


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_calculator_run_on_anthropic_shows_the_cached_prefix_on_its_second_turn(
    api_factory: ApiFactory, anthropic_fake: LoopbackLLMServer, stream: bool
) -> None:
    api = await api_factory(
        tools=None,  # the built-in tools: the calculator
        llm_from_settings=True,
        llm_provider="anthropic",
        llm_base_url=anthropic_fake.base_url,
        anthropic_api_key="test-key-0123456789",
        llm_model="claude-sonnet-5-5",
    )

    body = {"goal": "What is 17 * 23?", "stream": stream}
    response = await api.post("/v1/runs", json=body, headers=headers())
    assert response.status_code in (200, 201), response.text  # a streamed run's events, or the finished run
    run = (await api.get(response.headers["location"], headers=headers(), params={"wait": 30})).json()
    run_id = run["id"]
    assert (run["status"], run["answer"]) == ("succeeded", "17 * 23 = 391")

    trace = (await api.get(f"/v1/runs/{run_id}/trace", headers=headers())).json()
    first, tool_step, second = trace["steps"]
    assert (tool_step["tool_name"], tool_step["result"]["output"]) == ("calculator", "391")
    assert first["request"]["provider"] == "anthropic"
    assert "cache_read_tokens" not in first  # the first turn writes the prefix to the cache
    assert first["cache_write_tokens"] > 0
    assert 0 < second["cache_read_tokens"] <= second["input_tokens"]
    assert second["cache_read_tokens"] >= first["cache_write_tokens"], "the first turn's prefix was read back"
    assert second["cost_usd"] > 0

    sent = anthropic_fake.requests[1].body
    assert sent["max_tokens"] > 0
    assert sent["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent["system"][-1]["cache_control"] == {"type": "ephemeral"}
    (result,) = [b for b in sent["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert (result["tool_use_id"], result["content"]) == ("toolu_01", "391")


async def test_the_next_run_of_a_session_reads_the_conversation_so_far_from_the_cache(
    memory_api_factory: ApiFactory,
) -> None:
    answers = [Reply(text="391.", usage=None), Reply(text="You asked for 17 * 23.", usage=None)]
    async with LoopbackLLMServer(AnthropicWire(), answers) as fake:
        api = await memory_api_factory(
            tools=None,
            llm_from_settings=True,
            llm_provider="anthropic",
            llm_base_url=fake.base_url,
            anthropic_api_key="test-key-0123456789",
        )
        session = {"session_id": "s-cache"}
        first = (await api.post("/v1/runs", json={"goal": "17 * 23?", **session}, headers=headers())).json()
        second = (await api.post("/v1/runs", json={"goal": "What did I ask?", **session}, headers=headers())).json()

        assert (first["status"], second["status"]) == ("succeeded", "succeeded")
        (step,) = (await api.get(f"/v1/runs/{second['id']}/trace", headers=headers())).json()["steps"]
        (earlier,) = (await api.get(f"/v1/runs/{first['id']}/trace", headers=headers())).json()["steps"]
        # the first run's whole prompt (tools, system, its goal) is the cached prefix of the second's
        assert step["cache_read_tokens"] == earlier["cache_write_tokens"] > 0
