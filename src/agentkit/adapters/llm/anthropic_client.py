"""The Anthropic adapter: the Messages API with client tools, through the official `anthropic` SDK.

The SDK's own retries are off (`max_retries=0`): `RetryingLLMClient` is the one retry policy.
Every request sets `max_tokens` (the API requires it) and marks the stable prefix for prompt
caching (see `anthropic_translate`). `stream` asks for the same message with `stream: true` and
reads its events (see `anthropic_stream`).
"""

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic
import httpx2

from agentkit.adapters.llm.anthropic_errors import LABEL, translate_anthropic_error
from agentkit.adapters.llm.anthropic_stream import MessageAssembler
from agentkit.adapters.llm.anthropic_translate import (
    from_anthropic_message,
    to_anthropic_messages,
    to_anthropic_system,
    to_anthropic_tools,
)
from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.errors import ProviderUnavailable, shorten
from agentkit.application.errors import LLMError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMDelta, LLMResponse, Message
from agentkit.domain.tools import ToolSchema

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
# The API requires max_tokens on every request; this is used when LLM_MAX_TOKENS is unset.
DEFAULT_MAX_TOKENS = 4096


class AnthropicLLMClient(LLMClient):
    """The Messages API behind the LLMClient port; one request per call, no retries of its own.

    Args:
        client: The SDK client (built with `max_retries=0`).
        model: The model name sent with every request.
        max_tokens: The output token limit every request sets.
        temperature: Sampling temperature, or None for the model's default (the newest models
            accept no other).
        prompt_caching: Put cache breakpoints on the tools, the system prompt and the conversation
            so far (`LLM_PROMPT_CACHING`).
    """

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        *,
        model: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
        prompt_caching: bool = True,
    ) -> None:
        self._client = client
        self._model = model
        self._cache = prompt_caching
        self._options: dict[str, Any] = {"max_tokens": max_tokens}
        # The SDK (1.0 and later) no longer takes sampling options as arguments, and the newest
        # models reject `temperature` (HTTP 400): it goes into the body only when LLM_TEMPERATURE is set.
        self._extra_body: dict[str, Any] = {} if temperature is None else {"temperature": temperature}

    @classmethod
    def from_config(cls, config: LLMConfig, *, http_client: httpx2.AsyncClient | None = None) -> "AnthropicLLMClient":
        """The client the LLM_* variables describe.

        Args:
            config: Settings `provider_checks.check_anthropic` accepted. Reads LLM_MODEL,
                LLM_BASE_URL, ANTHROPIC_API_KEY, LLM_TEMPERATURE, LLM_MAX_TOKENS,
                LLM_REQUEST_TIMEOUT_S and LLM_PROMPT_CACHING.
            http_client: An httpx2 client to send requests through (the SDK's HTTP library);
                by default the SDK makes its own.
        """
        sdk = anthropic.AsyncAnthropic(
            api_key=config.anthropic_api_key,
            base_url=config.llm_base_url,
            timeout=config.llm_request_timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        return cls(
            sdk,
            model=config.llm_model or DEFAULT_ANTHROPIC_MODEL,
            max_tokens=config.llm_max_tokens or DEFAULT_MAX_TOKENS,
            temperature=config.llm_temperature,
            prompt_caching=config.llm_prompt_caching,
        )

    @property
    def provider(self) -> str:
        """Always `anthropic`."""
        return "anthropic"

    @property
    def model(self) -> str:
        """The model every request names."""
        return self._model

    @property
    def parameters(self) -> dict[str, Any]:
        """The sampling options every request sends (`max_tokens` always)."""
        return {**self._options, **self._extra_body}

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Send one Messages request and translate the answer.

        Raises:
            ProviderUnavailable: rate limit, overload (529), timeout, dropped connection or server error.
            LLMRequestError: the request, the key or the model was rejected.
        """
        try:
            message = await self._client.messages.create(**self._request(messages, tools))
        except anthropic.AnthropicError as exc:
            raise self._error(exc) from exc
        return from_anthropic_message(message)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """Send the request with `stream: true`; yield text and input_json_delta pieces, then what `chat` gives.

        Raises:
            ProviderUnavailable: as `chat`; also a stream that breaks off, reports a transient
                error event, sends an event that is not JSON, or ends without a stop reason.
            LLMRequestError: as `chat`, or an error event that blames the request.
        """
        try:
            events = await self._client.messages.create(**self._request(messages, tools), stream=True)
        except anthropic.AnthropicError as exc:
            raise self._error(exc) from exc
        assembler = MessageAssembler()
        try:
            async for event in events:
                for fragment in assembler.feed(event):
                    yield fragment
        except anthropic.AnthropicError as exc:
            raise self._error(exc) from exc
        except httpx2.TransportError as exc:
            raise ProviderUnavailable(
                f"the connection to {LABEL} broke during its answer: {type(exc).__name__}: {exc}"
            ) from exc
        except json.JSONDecodeError as exc:
            raise ProviderUnavailable(f"{LABEL} sent a stream event that is not JSON: {shorten(exc.doc)}") from exc
        finally:
            await events.close()
        if not assembler.finished:
            raise ProviderUnavailable(f"{LABEL}'s stream ended before the answer did (no stop_reason)")
        for fragment in assembler.rest():
            yield fragment
        yield from_anthropic_message(assembler.message())

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._model,
            "messages": to_anthropic_messages(messages, cache=self._cache),
            **self._options,
        }
        if self._extra_body:
            request["extra_body"] = self._extra_body
        system = to_anthropic_system(messages, cache=self._cache)
        if system:
            request["system"] = system
        if tools:
            request["tools"] = to_anthropic_tools(tools, cache=self._cache)
        return request

    def _error(self, exc: anthropic.AnthropicError) -> LLMError:
        return translate_anthropic_error(exc, secrets=(self._client.api_key or "",))

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._client.close()
