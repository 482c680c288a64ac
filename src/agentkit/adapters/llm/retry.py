"""The one retry policy every LLM provider runs under.

Adapters make exactly one request per call (their SDKs' own retries are off, so the two never
multiply) and report transient trouble as `LLMUnavailable`. `RetryingLLMClient` wraps any
`LLMClient` and retries those failures with exponential backoff and full jitter, honouring the
server's `Retry-After`; `LLMRequestError` is never retried. Sleep and randomness are injected so
the timing can be tested without waiting.

A stream is retried only until its first fragment: what was sent to the client cannot be taken
back, so a stream that breaks after it ends with the error (see `RetryingLLMClient.stream`).
"""

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn

import msgspec
import structlog

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.adapters.llm.idle_deadline import IdleDeadline
from agentkit.application.errors import LLMError, LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMDelta, LLMResponse, Message
from agentkit.domain.tools import ToolSchema

Sleeper = Callable[[float], Awaitable[None]]
RandomSource = Callable[[], float]


logger = structlog.get_logger(__name__)


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """How often and how patiently to retry a provider.

    Attributes:
        max_retries: Retries after the first attempt (`LLM_MAX_RETRIES`); 0 means one attempt only.
        base_s: The first backoff ceiling (`LLM_BACKOFF_BASE_S`); it doubles on each retry.
        cap_s: The largest wait (`LLM_BACKOFF_CAP_S`), for backoff and for `Retry-After` alike.
        attempt_timeout_s: The most one attempt may take (`LLM_REQUEST_TIMEOUT_S`); for a stream,
            the most its first fragment, and each one after, may keep us waiting. None for no limit.
    """

    max_retries: int = 3
    base_s: float = 0.5
    cap_s: float = 20.0
    attempt_timeout_s: float | None = 60.0

    @classmethod
    def from_config(cls, config: LLMConfig) -> "RetryPolicy":
        """The policy the LLM_* variables configure."""
        return cls(
            max_retries=config.llm_max_retries,
            base_s=config.llm_backoff_base_s,
            cap_s=config.llm_backoff_cap_s,
            attempt_timeout_s=config.llm_request_timeout_s,
        )

    @property
    def max_attempts(self) -> int:
        """The first attempt plus the retries."""
        return self.max_retries + 1

    def backoff_s(self, retry_no: int, rand: float) -> float:
        """Full jitter: a uniform wait in [0, min(cap, base * 2 ** (retry_no - 1))).

        Args:
            retry_no: 1 for the first retry, 2 for the second, ...
            rand: A number in [0, 1) from the random source.
        """
        return rand * min(self.cap_s, self.base_s * 2.0 ** (retry_no - 1))

    def delay_s(self, retry_no: int, error: LLMUnavailable, rand: float) -> float | None:
        """The wait before retry `retry_no`, or None when it is not worth retrying.

        A server's `Retry-After` wins over the backoff (waiting less only earns another 429); one
        longer than `cap_s` ends the retries at once rather than stalling the run.
        """
        if retry_no > self.max_retries:
            return None
        asked = error.retry_after_s if isinstance(error, ProviderUnavailable) else None
        if asked is None:
            return self.backoff_s(retry_no, rand)
        return asked if asked <= self.cap_s else None


class RetryingLLMClient(LLMClient):
    """Any LLMClient with the retry policy around it; every attempt is logged.

    Rules:
        - `LLMUnavailable` (and an attempt that outlives `attempt_timeout_s`) is retried while the
          policy allows; then it is raised as `LLMUnavailable` with `attempts` set.
        - `LLMRequestError` is raised at once, with `attempts` set.
        - Any other exception from the wrapped client is a bug in it: it is logged with its
          traceback and raised as `LLMRequestError`, so the run ends with a reason instead of a crash.
        - The response records the attempts it took (`LLMResponse.attempts`).
        - `stream` applies the same rules until the wrapped stream's first item; after it nothing
          is retried (see `stream`).
    """

    def __init__(
        self,
        inner: LLMClient,
        policy: RetryPolicy,
        *,
        sleep: Sleeper | None = None,
        rand: RandomSource | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.policy = policy
        self._provider = inner.provider
        self._model = inner.model
        self._sleep = sleep or asyncio.sleep
        self._rand = rand or random.random
        self._monotonic = monotonic

    @property
    def provider(self) -> str:
        """The wrapped client's provider."""
        return self._provider

    @property
    def model(self) -> str:
        """The wrapped client's model."""
        return self._model

    @property
    def parameters(self) -> dict[str, Any]:
        """The wrapped client's sampling parameters."""
        return self.inner.parameters

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Call the wrapped client, retrying transient failures; see the class rules."""
        attempt = 0
        while True:
            attempt += 1
            started = self._monotonic()
            try:
                response = await self._attempt(messages, tools)
            except LLMUnavailable as exc:
                await self._sleep(self._retry_delay(exc, attempt))
                continue
            except Exception as exc:
                self._end_with(exc, attempt)
            self._log_call(response, attempt, started)
            return msgspec.structs.replace(response, attempts=attempt)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """Stream from the wrapped client, retrying failures that come before its first fragment.

        Rules:
            - Until the wrapped stream yields its first item, a failure is treated as `chat`
              treats it: `LLMUnavailable` (and a first item that takes longer than
              `attempt_timeout_s`) is retried under the policy, with the same backoff; the next
              attempt is a new stream from the start.
            - After the first fragment nothing is retried: the fragments already went out. An
              `LLMUnavailable` (or a wait longer than `attempt_timeout_s` for the next fragment)
              ends the stream as `LLMUnavailable`; `LLMRequestError` ends it as it is; either
              carries the attempts made.
            - The time limit is per wait, not per call: a long answer that keeps coming is never
              cut; one that stalls for `attempt_timeout_s` is.
            - A wrapped client without `stream` (a structural plug-in) streams through its `chat`,
              as the port's default does: the whole answer as one fragment.
            - The final response records the attempts it took, as with `chat`.
        """
        attempt = 0
        while True:
            attempt += 1
            started = self._monotonic()
            items = _stream_of(self.inner, messages, tools)
            retry_in_s: float | None = None
            try:
                async with IdleDeadline(self.policy.attempt_timeout_s) as deadline:
                    try:
                        item = await self._next(deadline, items)
                    except LLMUnavailable as exc:
                        retry_in_s = self._retry_delay(exc, attempt)
                    except Exception as exc:
                        self._end_with(exc, attempt)
                    if retry_in_s is None:
                        first_fragment_ms = round((self._monotonic() - started) * 1000, 1)
                        fragments = 0
                        try:
                            while not isinstance(item, LLMResponse):
                                yield item
                                fragments += 1
                                item = await self._next(deadline, items)
                            response = item
                        except LLMUnavailable as exc:
                            raise self._broke_off(exc, attempt, fragments) from exc
                        except Exception as exc:
                            self._end_with(exc, attempt)
            finally:
                await _close(items)
            if retry_in_s is None:
                break
            await self._sleep(retry_in_s)
        self._log_call(response, attempt, started, first_fragment_ms=first_fragment_ms, fragments=fragments)
        yield msgspec.structs.replace(response, attempts=attempt)

    async def _next(
        self, deadline: IdleDeadline, items: AsyncIterator[LLMDelta | LLMResponse]
    ) -> LLMDelta | LLMResponse:
        try:
            return await deadline.next(items)
        except TimeoutError:
            raise ProviderUnavailable(
                f"{self._provider} sent nothing for {self.policy.attempt_timeout_s:g} s"
            ) from None
        except StopAsyncIteration:
            raise LLMRequestError(f"the {self._provider} adapter's stream ended without a response") from None

    def _retry_delay(self, error: LLMUnavailable, attempt: int) -> float:
        """The wait before the next attempt; raises the error to end with when there is none."""
        delay = self.policy.delay_s(attempt, error, self._rand())
        if delay is None:
            raise self._gave_up(error, attempt) from error
        self._log_failure("llm.retry", error, attempt, retry_in_s=round(delay, 3))
        return delay

    def _end_with(self, error: Exception, attempt: int) -> NoReturn:
        """Raise what ends the call for a failure that is not retried: an LLMError as it is, anything else as a bug."""
        if isinstance(error, LLMError):
            error.attempts = attempt
            self._log_failure("llm.rejected", error, attempt)
            raise error
        logger.exception("llm.adapter_bug", provider=self._provider, model=self._model, attempt=attempt)
        raise LLMRequestError(
            f"the {self._provider} adapter failed unexpectedly: {type(error).__name__}: {error}", attempts=attempt
        ) from error

    def _broke_off(self, error: LLMUnavailable, attempt: int, fragments: int) -> LLMUnavailable:
        self._log_failure("llm.stream_broke", error, attempt, fragments=fragments)
        return LLMUnavailable(
            f"{self._provider}'s answer broke off after {fragments} fragments (not retried): {error}",
            attempts=attempt,
        )

    def _log_call(self, response: LLMResponse, attempt: int, started: float, **extra: float) -> None:
        logger.info(
            "llm.call",
            provider=self._provider,
            model=self._model,
            attempt=attempt,
            latency_ms=round((self._monotonic() - started) * 1000, 1),
            finish_reason=str(response.finish_reason),
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            **extra,
        )

    async def _attempt(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        # The SDKs' timeouts bound each read; this bounds the whole attempt, for any adapter.
        try:
            async with asyncio.timeout(self.policy.attempt_timeout_s):
                return await self.inner.chat(messages, tools)
        except TimeoutError:
            raise ProviderUnavailable(
                f"{self._provider} did not answer within {self.policy.attempt_timeout_s:g} s"
            ) from None

    def _gave_up(self, error: LLMUnavailable, attempt: int) -> LLMUnavailable:
        asked = error.retry_after_s if isinstance(error, ProviderUnavailable) else None
        if attempt <= self.policy.max_retries and asked is not None:
            message = (
                f"{self._provider} asked to wait {asked:.0f} s before retrying, longer than "
                f"LLM_BACKOFF_CAP_S={self.policy.cap_s:g} s: {error}"
            )
        else:
            tries = "1 attempt" if attempt == 1 else f"{attempt} attempts"
            message = f"{self._provider} stayed unavailable after {tries}: {error}"
        self._log_failure("llm.gave_up", error, attempt)
        return LLMUnavailable(message, attempts=attempt)

    def _log_failure(self, event: str, error: LLMError, attempt: int, **extra: float) -> None:
        logger.warning(
            event,
            provider=self._provider,
            model=self._model,
            attempt=attempt,
            max_attempts=self.policy.max_attempts,
            error=str(error),
            status=getattr(error, "status", None),
            **extra,
        )

    async def aclose(self) -> None:
        """Close the wrapped client."""
        await self.inner.aclose()


def _stream_of(
    client: LLMClient, messages: Sequence[Message], tools: Sequence[ToolSchema]
) -> AsyncIterator[LLMDelta | LLMResponse]:
    if getattr(client, "stream", None) is None:  # a structural plug-in from before the port could stream
        return LLMClient.stream(client, messages, tools)
    return aiter(client.stream(messages, tools))


async def _close(items: AsyncIterator[LLMDelta | LLMResponse]) -> None:
    """Close a stream left before its end, so its connection is released now rather than by the collector."""
    close = getattr(items, "aclose", None)
    if close is not None:
        await close()
