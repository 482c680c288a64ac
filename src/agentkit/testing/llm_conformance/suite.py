"""The provider conformance suite: the LLMClient port's promises, for any provider, on a loopback fake.

Subclass `LLMConformance` in a test module and give it a `conformance_target` fixture::

    class TestAcmeConformance(LLMConformance):
        @pytest.fixture
        async def conformance_target(self) -> AsyncIterator[ConformanceTarget]:
            target = HttpTarget("acme", AcmeWire, build_acme_client)
            yield target
            await target.aclose()

Every test runs twice, reading the answer whole (`chat`) and streamed (`stream`); a streamed answer
must be made up by its fragments and end with the whole response. The retry tests wrap the client
in AgentKit's `RetryingLLMClient` (with a sleeper that only records its waits), as the composition
root does: the client must report trouble the way that policy understands.
"""

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

import pytest

from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.adapters.pricing.genai_prices import GenAIPriceTable
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient, stream_of
from agentkit.domain.messages import FinishReason, LLMDelta, LLMResponse, Message, TextDelta, ToolCallDelta, Usage
from agentkit.domain.tools import ToolSchema
from agentkit.testing.llm_conformance.answers import Failure, FakeCall, FakeUsage, Hang, Reply
from agentkit.testing.llm_conformance.targets import ConformanceTarget

Mode = Literal["chat", "stream"]

WEATHER = ToolSchema(
    name="get_weather",
    description="The current weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CONVERSATION = (
    Message(role="system", content="You are a weather assistant."),
    Message(role="user", content="What is the weather in Paris and in Tokyo?"),
)
PARIS = FakeCall(id="call_paris", name="get_weather", arguments={"city": "Paris"})
TOKYO = FakeCall(id="call_tokyo", name="get_weather", arguments={"city": "Tokyo"})
ANSWER = Reply(text="It is 18 °C in Paris and 25 °C in Tokyo.")


async def ask(
    client: LLMClient, mode: Mode, messages: Sequence[Message] = CONVERSATION
) -> tuple[LLMResponse, list[LLMDelta]]:
    """The client's response to `messages` (with the weather tool), read whole or streamed.

    A stream is checked on the way: fragments first, each text fragment part of the text, each
    call's fragments its id and name once and then its arguments; the last item the response.
    """
    if mode == "chat":
        return await client.chat(messages, [WEATHER]), []
    items = [item async for item in stream_of(client, messages, [WEATHER])]
    *fragments, response = items
    assert isinstance(response, LLMResponse), "a stream ends with the whole response"
    assert all(isinstance(f, TextDelta | ToolCallDelta) for f in fragments), "only fragments come before it"
    deltas: list[LLMDelta] = [f for f in fragments if isinstance(f, TextDelta | ToolCallDelta)]
    assert_fragments_make_up(deltas, response)
    return response, deltas


def assert_fragments_make_up(fragments: Sequence[LLMDelta], response: LLMResponse) -> None:
    """The text fragments join to the text; each call's fragments name it once and join to its arguments."""
    if response.finish_reason is not FinishReason.REFUSED:  # a block may come after text went out
        assert "".join(f.text for f in fragments if isinstance(f, TextDelta)) == response.text
    calls: defaultdict[int, list[ToolCallDelta]] = defaultdict(list)
    for fragment in fragments:
        if isinstance(fragment, ToolCallDelta):
            calls[fragment.index].append(fragment)
    assert sorted(calls) == list(range(len(response.tool_calls)))
    for index, call in enumerate(response.tool_calls):
        pieces = calls[index]
        assert [(p.id, p.name) for p in pieces if p.id or p.name] == [(call.id, call.name)]
        arguments = "".join(p.arguments for p in pieces)
        if call.arguments_error is None:
            assert (json.loads(arguments, strict=False) if arguments.strip() else {}) == call.arguments


class _Waits:
    """A sleeper that records the waits the retry policy asks for and does not wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def retrying(client: LLMClient, waits: _Waits, *, retries: int = 2) -> RetryingLLMClient:
    """The client under AgentKit's retry policy, as the composition root wraps it (no time limit of its own)."""
    policy = RetryPolicy(max_retries=retries, base_s=0.25, cap_s=30.0, attempt_timeout_s=None)
    return RetryingLLMClient(client, policy, sleep=waits, rand=lambda: 0.5)


async def _read_into(seen: list[LLMDelta | LLMResponse], client: LLMClient) -> None:
    """Read the client's stream into `seen`, so what came before an error can be looked at."""
    async for item in stream_of(client, CONVERSATION, [WEATHER]):
        seen.append(item)  # noqa: PERF401 - one at a time: a comprehension would lose them when the stream raises


def _results_answering(message: LLMResponse, texts: Sequence[str], *, error: bool = False) -> list[Message]:
    return [
        Message(role="tool", content=text, tool_call_id=call.id, name=call.name, is_error=error)
        for call, text in zip(message.tool_calls, texts, strict=True)
    ]


class LLMConformance:
    """The port's promises; a subclass provides the `conformance_target` fixture (see the module docstring)."""

    @pytest.fixture(params=["chat", "stream"])
    def mode(self, request: pytest.FixtureRequest) -> Mode:
        """Read answers whole, then streamed."""
        value: Mode = request.param
        return value

    async def test_a_text_answer(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        client = await conformance_target.client([ANSWER])
        response, fragments = await ask(client, mode)
        assert response.text == ANSWER.text
        assert response.tool_calls == ()
        assert response.finish_reason is FinishReason.STOP
        assert response.refusal is None
        assert response.usage.input_tokens > 0
        assert response.usage.output_tokens > 0
        if mode == "stream":
            assert len([f for f in fragments if isinstance(f, TextDelta)]) > 1, "the text came in pieces"

    async def test_one_call(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        client = await conformance_target.client([Reply(calls=(PARIS,))])
        response, _ = await ask(client, mode)
        assert response.finish_reason is FinishReason.TOOL_CALLS
        (call,) = response.tool_calls
        assert (call.id, call.name, call.arguments, call.arguments_error) == (
            PARIS.id,
            "get_weather",
            {"city": "Paris"},
            None,
        )

    async def test_two_calls_in_a_turn_and_their_results_going_back(
        self, conformance_target: ConformanceTarget, mode: Mode
    ) -> None:
        client = await conformance_target.client([Reply(calls=(PARIS, TOKYO)), ANSWER])
        first, _ = await ask(client, mode)
        assert [c.arguments["city"] for c in first.tool_calls] == ["Paris", "Tokyo"]
        assert len({c.id for c in first.tool_calls}) == 2
        history = [*CONVERSATION, first.to_message(), *_results_answering(first, ["18 °C", "25 °C"])]
        second, _ = await ask(client, mode, history)
        assert second.text == ANSWER.text
        sent = conformance_target.tool_results(1)
        assert [r.text for r in sent] == ["18 °C", "25 °C"]
        assert [r.call_id for r in sent if r.call_id is not None] in ([], [c.id for c in first.tool_calls])

    async def test_a_tool_error_goes_back_as_an_error(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        client = await conformance_target.client([Reply(calls=(PARIS,)), Reply(text="Sorry, no weather for Paris.")])
        first, _ = await ask(client, mode)
        history = [*CONVERSATION, first.to_message(), *_results_answering(first, ["ERROR: no station"], error=True)]
        second, _ = await ask(client, mode, history)
        assert second.text
        (sent,) = conformance_target.tool_results(1)
        assert "no station" in sent.text
        assert sent.is_error in (True, None), "a format with an error mark sets it"

    async def test_a_bad_tool_call_from_the_model(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        bad = FakeCall(id="call_bad", name="get_weather", raw_arguments='{"city": "Par')
        client = await conformance_target.client([Reply(calls=(bad,))])
        if conformance_target.bad_calls_are_unavailable:
            with pytest.raises(LLMUnavailable):
                await ask(client, mode)
            return
        response, _ = await ask(client, mode)
        (call,) = response.tool_calls
        assert call.name == "get_weather"
        assert call.arguments == {}
        assert call.arguments_error, "the registry shows the model what was wrong"

    async def test_rate_limited_then_answered_after_the_retry_after(
        self, conformance_target: ConformanceTarget, mode: Mode
    ) -> None:
        waits = _Waits()
        limited = Failure(status=429, message="rate limited", headers={"retry-after": "3"})
        client = retrying(await conformance_target.client([limited, ANSWER]), waits)
        response, _ = await ask(client, mode)
        assert response.text == ANSWER.text
        assert response.attempts == 2
        assert waits.waits == [3.0]
        assert conformance_target.requests() == 2

    async def test_a_rejected_request_is_not_retried(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        waits = _Waits()
        rejected = Failure(status=400, message="messages: field required")
        client = retrying(await conformance_target.client([rejected, ANSWER]), waits)
        with pytest.raises(LLMRequestError, match="field required") as raised:
            await ask(client, mode)
        assert raised.value.attempts == 1
        assert waits.waits == []
        assert conformance_target.requests() == 1

    async def test_a_timeout_is_retried(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        waits = _Waits()
        client = retrying(await conformance_target.client([Hang(), ANSWER], timeout_s=0.5), waits)
        response, _ = await ask(client, mode)
        assert response.text == ANSWER.text
        assert response.attempts == 2
        assert len(waits.waits) == 1

    async def test_a_broken_connection_is_retried_only_before_the_first_fragment(
        self, conformance_target: ConformanceTarget, mode: Mode
    ) -> None:
        waits = _Waits()
        cut = Reply(text=ANSWER.text, cut_after=6)  # a few words of the text, then the connection drops
        client = retrying(await conformance_target.client([cut, ANSWER]), waits)
        if mode == "chat":
            response, _ = await ask(client, mode)
            assert (response.text, response.attempts) == (ANSWER.text, 2)
            return
        seen: list[LLMDelta | LLMResponse] = []
        with pytest.raises(LLMUnavailable, match="broke off") as raised:
            await _read_into(seen, client)
        assert seen, "fragments went out before the break"
        assert all(isinstance(item, TextDelta) for item in seen)
        assert raised.value.attempts == 1
        assert conformance_target.requests() == 1, "what went out cannot be taken back: no retry"

    async def test_a_refusal(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        refused = Reply(stop="refusal", refusal="I can't help with that.")
        client = await conformance_target.client([refused])
        response, _ = await ask(client, mode)
        assert response.finish_reason is FinishReason.REFUSED
        assert response.refusal
        assert response.tool_calls == ()

    async def test_a_stop_at_the_token_limit(self, conformance_target: ConformanceTarget, mode: Mode) -> None:
        client = await conformance_target.client([Reply(text="It is 18 °C in", stop="length")])
        response, _ = await ask(client, mode)
        assert response.finish_reason is FinishReason.LENGTH
        assert response.text == "It is 18 °C in"

    async def test_usage_with_cached_input_and_its_cost(
        self, conformance_target: ConformanceTarget, mode: Mode
    ) -> None:
        usage = FakeUsage(input_tokens=12_000, output_tokens=300, cache_read_tokens=10_000)
        client = await conformance_target.client([Reply(text=ANSWER.text, usage=usage)])
        response, _ = await ask(client, mode)
        assert response.usage == Usage(input_tokens=12_000, output_tokens=300, cache_read_tokens=10_000)
        if conformance_target.priced:
            prices = GenAIPriceTable()
            cost = prices.cost_usd(client.provider, client.model, response.usage)
            uncached = prices.cost_usd(client.provider, client.model, Usage(input_tokens=12_000, output_tokens=300))
            assert cost is not None
            assert uncached is not None
            assert 0 < cost < uncached, "cache reads cost less than fresh input"

    @pytest.mark.parametrize("answers", ["text", "one_call", "two_calls", "refusal", "length"])
    async def test_a_stream_ends_with_what_chat_gives(
        self, conformance_target: ConformanceTarget, answers: str
    ) -> None:
        reply = {
            "text": ANSWER,
            "one_call": Reply(calls=(PARIS,)),
            "two_calls": Reply(text="Let me look.", calls=(PARIS, TOKYO)),
            "refusal": Reply(stop="refusal", refusal="No."),
            "length": Reply(text="It is", stop="length"),
        }[answers]
        whole, _ = await ask(await conformance_target.client([reply]), "chat")
        streamed, _ = await ask(await conformance_target.client([reply]), "stream")
        assert streamed == whole
