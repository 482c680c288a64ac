"""The retry policy: which failures are retried, how long it waits (no real sleeping), what it logs."""

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from structlog.testing import capture_logs

from agentkit.adapters.llm.errors import ProviderUnavailable, retry_after_s
from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy
from agentkit.application.errors import LLMError, LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMResponse, Message
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.wiring.settings import load_settings
from tests.fixtures.llm.conversation import Sleeps

HELLO = [Message(role="user", content="the secret plan")]


class FakeProvider(LLMClient):
    """Names itself as the provider "flaky" with model "m1"."""

    @property
    def provider(self) -> str:
        return "flaky"

    @property
    def model(self) -> str:
        return "m1"


class FlakyLLMClient(FakeProvider):
    """Fails with the given errors, in order, then answers; counts its calls."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0
        self.closed = False

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return LLMResponse(text="done")

    async def aclose(self) -> None:
        self.closed = True


class HangingLLMClient(FakeProvider):
    """Never answers."""

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def retrying(
    inner: LLMClient, sleeps: Sleeps, *, rand: float = 0.5, max_retries: int = 3, attempt_timeout_s: float = 5.0
) -> RetryingLLMClient:
    return RetryingLLMClient(
        inner,
        RetryPolicy(max_retries=max_retries, base_s=1.0, cap_s=8.0, attempt_timeout_s=attempt_timeout_s),
        sleep=sleeps,
        rand=lambda: rand,
    )


def unavailable(retry_after: float | None = None) -> ProviderUnavailable:
    return ProviderUnavailable("HTTP 503: overloaded", retry_after_s=retry_after, status=503)


@pytest.mark.parametrize(
    ("retry_no", "rand", "expected"),
    [(1, 0.5, 0.5), (2, 0.5, 1.0), (3, 0.5, 2.0), (4, 0.5, 4.0), (5, 0.5, 4.0), (9, 0.999, 7.992), (3, 0.0, 0.0)],
)
def test_backoff_is_full_jitter_under_an_exponential_ceiling_with_a_cap(
    retry_no: int, rand: float, expected: float
) -> None:
    policy = RetryPolicy(base_s=1.0, cap_s=8.0)
    assert policy.backoff_s(retry_no, rand) == pytest.approx(expected)


def test_the_policy_comes_from_the_llm_settings() -> None:
    settings = load_settings(
        {
            "LLM_MAX_RETRIES": "5",
            "LLM_BACKOFF_BASE_S": "0.25",
            "LLM_BACKOFF_CAP_S": "10",
            "LLM_REQUEST_TIMEOUT_S": "30",
        }
    )
    assert RetryPolicy.from_config(settings.llm) == RetryPolicy(
        max_retries=5, base_s=0.25, cap_s=10.0, attempt_timeout_s=30.0
    )
    assert RetryPolicy.from_config(load_settings({}).llm).max_attempts == 4  # LLM_MAX_RETRIES defaults to 3


async def test_transient_failures_are_retried_with_growing_jittered_waits() -> None:
    inner, sleeps = FlakyLLMClient(unavailable(), unavailable(), unavailable()), Sleeps()
    response = await retrying(inner, sleeps, rand=0.5).chat(HELLO, [])
    assert response.text == "done"
    assert response.attempts == 4
    assert sleeps.waits == [0.5, 1.0, 2.0]


async def test_retry_after_from_the_server_wins_over_the_backoff() -> None:
    inner, sleeps = FlakyLLMClient(unavailable(retry_after=3.5)), Sleeps()
    response = await retrying(inner, sleeps, rand=0.1).chat(HELLO, [])
    assert (response.attempts, sleeps.waits) == (2, [3.5])


async def test_a_retry_after_longer_than_the_cap_ends_the_retries_at_once() -> None:
    inner, sleeps = FlakyLLMClient(unavailable(retry_after=60)), Sleeps()
    with pytest.raises(LLMUnavailable, match=r"asked to wait 60 s.*LLM_BACKOFF_CAP_S=8") as caught:
        await retrying(inner, sleeps).chat(HELLO, [])
    assert (caught.value.attempts, inner.calls, sleeps.waits) == (1, 1, [])


async def test_when_retries_run_out_the_error_says_how_many_attempts_it_took() -> None:
    inner, sleeps = FlakyLLMClient(*(unavailable() for _ in range(5))), Sleeps()
    with pytest.raises(LLMUnavailable, match=r"flaky stayed unavailable after 3 attempts: HTTP 503") as caught:
        await retrying(inner, sleeps, max_retries=2).chat(HELLO, [])
    assert type(caught.value) is LLMUnavailable
    assert (caught.value.attempts, inner.calls, len(sleeps.waits)) == (3, 3, 2)


async def test_no_retries_means_one_attempt() -> None:
    inner, sleeps = FlakyLLMClient(unavailable()), Sleeps()
    with pytest.raises(LLMUnavailable) as caught:
        await retrying(inner, sleeps, max_retries=0).chat(HELLO, [])
    assert (caught.value.attempts, inner.calls, sleeps.waits) == (1, 1, [])


async def test_a_rejected_request_is_never_retried_and_keeps_its_attempt_count() -> None:
    inner, sleeps = FlakyLLMClient(unavailable(), LLMRequestError("HTTP 400: bad schema")), Sleeps()
    with pytest.raises(LLMRequestError, match="bad schema") as caught:
        await retrying(inner, sleeps).chat(HELLO, [])
    assert (caught.value.attempts, inner.calls, len(sleeps.waits)) == (2, 2, 1)


async def test_an_attempt_that_outlives_the_request_timeout_is_a_transient_failure() -> None:
    sleeps = Sleeps()
    client = retrying(HangingLLMClient(), sleeps, max_retries=1, attempt_timeout_s=0.01)
    with pytest.raises(LLMUnavailable, match=r"after 2 attempts: flaky did not answer within 0.01 s") as caught:
        await client.chat(HELLO, [])
    assert caught.value.attempts == 2


async def test_a_bug_in_the_wrapped_client_becomes_a_request_error_not_a_crash() -> None:
    inner = FlakyLLMClient(KeyError("choices"))
    with pytest.raises(LLMRequestError, match="the flaky adapter failed unexpectedly: KeyError") as caught:
        await retrying(inner, Sleeps()).chat(HELLO, [])
    assert caught.value.attempts == 1


async def test_a_plain_llm_error_from_a_plugin_is_not_retried() -> None:
    inner = FlakyLLMClient(LLMError("gave up"))
    with pytest.raises(LLMError, match="gave up"):
        await retrying(inner, Sleeps()).chat(HELLO, [])
    assert inner.calls == 1


async def test_every_attempt_is_logged_without_the_prompt() -> None:
    inner = FlakyLLMClient(unavailable(), unavailable(retry_after=2))
    with capture_logs() as logs:
        await retrying(inner, Sleeps(), rand=0.5).chat(HELLO, [])
    assert [(log["event"], log["attempt"]) for log in logs] == [("llm.retry", 1), ("llm.retry", 2), ("llm.call", 3)]
    assert [log.get("retry_in_s") for log in logs[:2]] == [0.5, 2]
    assert all(log["provider"] == "flaky" and log["model"] == "m1" for log in logs)
    assert logs[0]["status"] == 503
    assert "secret plan" not in repr(logs)


async def test_giving_up_is_logged_too() -> None:
    with capture_logs() as logs, pytest.raises(LLMUnavailable):
        await retrying(FlakyLLMClient(unavailable()), Sleeps(), max_retries=0).chat(HELLO, [])
    assert [(log["event"], log["log_level"]) for log in logs] == [("llm.gave_up", "warning")]


async def test_closing_the_wrapper_closes_the_wrapped_client() -> None:
    inner = FlakyLLMClient()
    await retrying(inner, Sleeps()).aclose()
    assert inner.closed
    await HangingLLMClient().aclose()  # the port's default: nothing to close, no error


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "120", "retry-after": "1"}, 0.12),
        ({"retry-after": "Wed, 21 Oct 2026 07:28:30 GMT"}, 30.0),
        ({"retry-after": "Wed, 21 Oct 2026 07:27:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_reads_seconds_milliseconds_and_http_dates(headers: dict[str, str], expected: float | None) -> None:
    now = datetime(2026, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry_after_s(headers, now=now) == (pytest.approx(expected) if expected is not None else None)
