"""The retry policy around a stream: retried until the first fragment, never after it."""

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest
from structlog.testing import capture_logs

from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.adapters.llm.scripted import ScriptedFailure, ScriptedLLMClient
from agentkit.application.errors import LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, ToolCall, ToolCallDelta
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.conversation import Sleeps
from tests.fixtures.llm.streams import read_into

HELLO = [Message(role="user", content="the secret plan")]
ANSWER = LLMResponse(text="Paris is the capital of France.")


def retrying(
    inner: LLMClient, sleeps: Sleeps, *, max_retries: int = 3, attempt_timeout_s: float | None = 5.0
) -> RetryingLLMClient:
    policy = RetryPolicy(max_retries=max_retries, base_s=1.0, cap_s=8.0, attempt_timeout_s=attempt_timeout_s)
    return RetryingLLMClient(inner, policy, sleep=sleeps, rand=lambda: 0.5)


def unavailable() -> ProviderUnavailable:
    return ProviderUnavailable("HTTP 503: overloaded", status=503)


async def collect(client: LLMClient) -> list[LLMDelta | LLMResponse]:
    return [item async for item in client.stream(HELLO, [])]


def text_of(items: Sequence[LLMDelta | LLMResponse]) -> str:
    return "".join(item.text for item in items if isinstance(item, TextDelta))


async def test_failures_before_the_first_fragment_are_retried_like_chat() -> None:
    inner = ScriptedLLMClient([ScriptedFailure(error=unavailable()), ScriptedFailure(error=unavailable()), ANSWER])
    sleeps = Sleeps()
    items = await collect(retrying(inner, sleeps))

    assert text_of(items) == ANSWER.text
    assert items[-1] == LLMResponse(text=ANSWER.text, attempts=3)
    assert sleeps.waits == [0.5, 1.0]
    assert len(inner.requests) == 3


async def test_a_stream_that_breaks_after_its_first_fragments_is_not_retried() -> None:
    broken = ScriptedFailure(error=unavailable(), fragments=2, partial=ANSWER)
    inner, sleeps = ScriptedLLMClient([broken, ANSWER]), Sleeps()
    seen: list[LLMDelta | LLMResponse] = []
    with pytest.raises(LLMUnavailable, match=r"broke off after 2 fragments \(not retried\): HTTP 503") as caught:
        await read_into(seen, retrying(inner, sleeps).stream(HELLO, []))

    assert text_of(seen) == "Paris is "  # what went out stays what it was: nothing repeated
    assert (caught.value.attempts, len(inner.requests), sleeps.waits) == (1, 1, [])
    assert inner.remaining == 1


async def test_a_retried_stream_counts_its_attempts_when_it_breaks_later() -> None:
    broken = ScriptedFailure(error=unavailable(), fragments=1, partial=ANSWER)
    inner = ScriptedLLMClient([ScriptedFailure(error=unavailable()), broken])
    with pytest.raises(LLMUnavailable) as caught:
        await collect(retrying(inner, Sleeps()))
    assert caught.value.attempts == 2


async def test_a_rejected_request_after_fragments_ends_the_stream_as_it_is() -> None:
    rejected = ScriptedFailure(error=LLMRequestError("HTTP 400: bad schema"), fragments=3, partial=ANSWER)
    with pytest.raises(LLMRequestError, match="bad schema") as caught:
        await collect(retrying(ScriptedLLMClient([rejected]), Sleeps()))
    assert caught.value.attempts == 1


async def test_when_retries_run_out_before_the_first_fragment_the_error_says_how_many_attempts() -> None:
    inner, sleeps = ScriptedLLMClient([ScriptedFailure(error=unavailable())] * 3), Sleeps()
    with pytest.raises(LLMUnavailable, match=r"scripted stayed unavailable after 3 attempts") as caught:
        await collect(retrying(inner, sleeps, max_retries=2))
    assert (caught.value.attempts, len(sleeps.waits)) == (3, 2)


class GatedStream(LLMClient):
    """Streams the fragments it is told to, one per `release`, and hangs in between."""

    def __init__(self, *, first_hangs: int = 0) -> None:
        self.first_hangs = first_hangs
        self.calls = 0
        self.closed = 0
        self.gate = asyncio.Queue[LLMDelta | LLMResponse]()

    @property
    def provider(self) -> str:
        return "gated"

    @property
    def model(self) -> str:
        return "m1"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        raise AssertionError("the wrapper streams through stream()")

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        self.calls += 1
        try:
            if self.calls <= self.first_hangs:
                await asyncio.Event().wait()
            while True:
                item = await self.gate.get()
                yield item
                if isinstance(item, LLMResponse):
                    return
        finally:
            self.closed += 1


async def test_a_first_fragment_that_does_not_come_in_time_is_retried() -> None:
    inner = GatedStream(first_hangs=1)
    for item in (TextDelta(text="Hi"), ANSWER):
        inner.gate.put_nowait(item)
    items = await collect(retrying(inner, Sleeps(), attempt_timeout_s=0.01))
    assert items[-1].attempts == 2  # type: ignore[union-attr]
    assert (inner.calls, inner.closed) == (2, 2)


async def test_a_stream_that_stalls_after_a_fragment_ends_unavailable() -> None:
    inner = GatedStream()
    inner.gate.put_nowait(TextDelta(text="Hi"))
    with pytest.raises(LLMUnavailable, match=r"broke off after 1 fragments.*gated sent nothing for 0.01 s"):
        await collect(retrying(inner, Sleeps(), attempt_timeout_s=0.01))
    assert (inner.calls, inner.closed) == (1, 1)


async def test_the_time_limit_is_per_wait_and_a_slow_consumer_does_not_count() -> None:
    inner = GatedStream()
    for queued in (TextDelta(text="a"), TextDelta(text="b"), ANSWER):
        inner.gate.put_nowait(queued)
    items: list[LLMDelta | LLMResponse] = []
    async for item in retrying(inner, Sleeps(), attempt_timeout_s=0.01).stream(HELLO, []):
        items.append(item)
        await asyncio.sleep(0.05)  # the consumer takes longer than the limit between fragments
    assert items[-1] == LLMResponse(text=ANSWER.text, attempts=1)


async def test_an_outside_cancellation_stays_a_cancellation() -> None:
    inner = GatedStream()
    inner.gate.put_nowait(TextDelta(text="Hi"))
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in retrying(inner, Sleeps(), attempt_timeout_s=60).stream(HELLO, []):
            started.set()

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert inner.closed == 1


async def test_a_consumer_that_stops_early_closes_the_wrapped_stream() -> None:
    inner = GatedStream()
    inner.gate.put_nowait(TextDelta(text="Hi"))
    stream = retrying(inner, Sleeps()).stream(HELLO, [])
    assert await anext(stream) == TextDelta(text="Hi")
    await stream.aclose()  # type: ignore[attr-defined]
    assert inner.closed == 1


class StructuralPlugin:
    """A plug-in written against the port without subclassing it: no `stream` of its own."""

    provider = "plain"
    model = "p1"
    parameters: dict[str, object] = {}  # noqa: RUF012

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        call = ToolCall(id=ToolCallId("c1"), name="get_weather", arguments={"city": "Paris"})
        return LLMResponse(text="Let me look.", tool_calls=(call,))

    async def aclose(self) -> None:
        return None


async def test_a_client_without_stream_answers_in_one_fragment_through_its_chat() -> None:
    items = await collect(retrying(StructuralPlugin(), Sleeps()))  # type: ignore[arg-type]
    answer = await StructuralPlugin().chat(HELLO, [])
    assert items == [
        TextDelta(text="Let me look."),
        ToolCallDelta(index=0, id=ToolCallId("c1"), name="get_weather", arguments='{"city":"Paris"}'),
        answer,
    ]


class BuggyStream(GatedStream):
    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        yield TextDelta(text="Hi")
        raise KeyError("choices")


class EndlessStream(GatedStream):
    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        yield TextDelta(text="Hi")


async def test_a_bug_in_the_wrapped_stream_becomes_a_request_error() -> None:
    with pytest.raises(LLMRequestError, match="the gated adapter failed unexpectedly: KeyError"):
        await collect(retrying(BuggyStream(), Sleeps()))
    with pytest.raises(LLMRequestError, match="the gated adapter's stream ended without a response"):
        await collect(retrying(EndlessStream(), Sleeps()))


async def test_the_call_is_logged_with_its_time_to_first_fragment() -> None:
    with capture_logs() as logs:
        await collect(retrying(ScriptedLLMClient([ScriptedFailure(error=unavailable()), ANSWER]), Sleeps()))
    assert [(log["event"], log["attempt"]) for log in logs] == [("llm.retry", 1), ("llm.call", 2)]
    call = logs[-1]
    assert call["fragments"] == 6
    assert 0 <= call["first_fragment_ms"] <= call["latency_ms"]
    assert "secret plan" not in repr(logs)


async def test_the_deadline_cancels_the_task_that_waits_not_the_one_that_began_the_stream() -> None:
    inner = GatedStream()
    inner.gate.put_nowait(TextDelta(text="Hi"))
    stream = retrying(inner, Sleeps(), attempt_timeout_s=0.01).stream(HELLO, [])
    first_read, release = asyncio.Event(), asyncio.Event()

    async def first_reader() -> LLMDelta | LLMResponse:
        item = await anext(stream)
        first_read.set()
        await release.wait()  # this task goes on with other work while another reads the rest
        return item

    began = asyncio.create_task(first_reader())
    await first_read.wait()
    async with asyncio.timeout(5):  # a guard: the failure this test looks for is a wait never cut
        with pytest.raises(LLMUnavailable, match=r"sent nothing for 0\.01 s"):
            await anext(stream)
    release.set()
    assert await began == TextDelta(text="Hi")
