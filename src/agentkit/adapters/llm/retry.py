"""The one retry policy every LLM provider runs under.

Adapters make exactly one request per call (their SDKs' own retries are off, so the two never
multiply) and report transient trouble as `LLMUnavailable`. `RetryingLLMClient` wraps any
`LLMClient` and retries those failures with exponential backoff and full jitter, honouring the
server's `Retry-After`; `LLMRequestError` is never retried. Sleep and randomness are injected so
the timing can be tested without waiting.
"""

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec
import structlog

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.application.errors import LLMError, LLMRequestError, LLMUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMResponse, Message
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
        attempt_timeout_s: The most one attempt may take (`LLM_REQUEST_TIMEOUT_S`); None for no limit.
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
                delay = self.policy.delay_s(attempt, exc, self._rand())
                if delay is None:
                    raise self._gave_up(exc, attempt) from exc
                self._log_failure("llm.retry", exc, attempt, retry_in_s=round(delay, 3))
                await self._sleep(delay)
                continue
            except LLMError as exc:
                exc.attempts = attempt
                self._log_failure("llm.rejected", exc, attempt)
                raise
            except Exception as exc:
                logger.exception("llm.adapter_bug", provider=self._provider, model=self._model, attempt=attempt)
                raise LLMRequestError(
                    f"the {self._provider} adapter failed unexpectedly: {type(exc).__name__}: {exc}", attempts=attempt
                ) from exc
            logger.info(
                "llm.call",
                provider=self._provider,
                model=self._model,
                attempt=attempt,
                latency_ms=round((self._monotonic() - started) * 1000, 1),
                finish_reason=str(response.finish_reason),
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
            )
            return msgspec.structs.replace(response, attempts=attempt)

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
