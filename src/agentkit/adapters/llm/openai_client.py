"""The OpenAI adapter: Chat Completions with function tools, through the official async SDK.

`LLM_BASE_URL` points it at any OpenAI-compatible server (vLLM, Ollama, llama.cpp, a gateway).
The SDK's own retries are off (`max_retries=0`): `RetryingLLMClient` is the one retry policy.
"""

from collections.abc import Sequence
from typing import Any, cast

import httpx
import openai

from agentkit.adapters.llm.errors import ProviderUnavailable, retry_after_s, shorten
from agentkit.adapters.llm.openai_translate import from_openai_completion, to_openai_messages, to_openai_tools
from agentkit.application.errors import ConfigurationError, LLMError, LLMRequestError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.settings import Settings
from agentkit.domain.messages import LLMResponse, Message
from agentkit.domain.tools import ToolSchema

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
# Statuses worth another attempt: timeout, lock conflict, rate limit, and any server error.
_TRANSIENT_STATUSES = frozenset({408, 409, 429})


class OpenAILLMClient(LLMClient):
    """Chat Completions behind the LLMClient port; one request per call, no retries of its own.

    Args:
        client: The SDK client (built with `max_retries=0`).
        model: The model name sent with every request.
        label: How errors name the provider ("openai", or the compatible server's URL).
        temperature: Sampling temperature, or None for the server's default.
        max_tokens: The output token limit, or None for the server's default.
        max_tokens_field: `max_completion_tokens` for OpenAI itself; compatible servers mostly
            know only the older `max_tokens`.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        model: str,
        label: str = "openai",
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_tokens_field: str = "max_completion_tokens",
    ) -> None:
        self._client = client
        self._model = model
        self._label = label
        self._options: dict[str, Any] = {}
        if temperature is not None:
            self._options["temperature"] = temperature
        if max_tokens is not None:
            self._options[max_tokens_field] = max_tokens

    @classmethod
    def from_settings(cls, settings: Settings, *, http_client: httpx.AsyncClient | None = None) -> "OpenAILLMClient":
        """The client the LLM_* settings describe.

        Args:
            settings: Reads LLM_MODEL, LLM_BASE_URL, OPENAI_API_KEY, LLM_TEMPERATURE, LLM_MAX_TOKENS
                and LLM_REQUEST_TIMEOUT_S.
            http_client: An httpx client to send requests through (tests pass one with a
                `MockTransport`); by default the SDK makes its own.

        Raises:
            ConfigurationError: OPENAI_API_KEY is missing, or LLM_MODEL is missing for a
                compatible server (its model names cannot be guessed).
        """
        if not settings.openai_api_key:
            raise ConfigurationError(
                "OPENAI_API_KEY is not set; LLM_PROVIDER=openai needs it "
                "(for a local server that takes no key, set any value)"
            )
        base_url = settings.llm_base_url
        if base_url and not settings.llm_model:
            raise ConfigurationError("LLM_MODEL is not set; name the model the server at LLM_BASE_URL serves")
        sdk = openai.AsyncOpenAI(
            api_key=settings.openai_api_key,
            base_url=base_url,
            timeout=settings.llm_request_timeout_s,
            max_retries=0,
            # The SDK is typed for httpx2 but takes an httpx client as well (it checks both).
            http_client=cast(Any, http_client),
        )
        return cls(
            sdk,
            model=settings.llm_model or DEFAULT_OPENAI_MODEL,
            label=f"the OpenAI-compatible server at {base_url}" if base_url else "openai",
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens,
            max_tokens_field="max_tokens" if base_url else "max_completion_tokens",
        )

    @property
    def model(self) -> str:
        """The model every request names."""
        return self._model

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Send one Chat Completions request and translate the answer.

        Raises:
            ProviderUnavailable: rate limit, timeout, dropped connection or server error.
            LLMRequestError: the request, the key or the model was rejected.
        """
        extra: dict[str, Any] = dict(self._options)
        if tools:
            extra["tools"] = to_openai_tools(tools)
        try:
            completion = await self._client.chat.completions.create(
                model=self._model, messages=to_openai_messages(messages), **extra
            )
        except openai.OpenAIError as exc:
            raise self._translate_error(exc) from exc
        return from_openai_completion(completion)

    def _translate_error(self, exc: openai.OpenAIError) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            return ProviderUnavailable(f"{self._label} did not answer in time")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return ProviderUnavailable(f"could not reach {self._label}: {type(cause).__name__}: {cause}")
        if isinstance(exc, openai.APIStatusError):
            return self._translate_status(exc)
        return LLMRequestError(f"{self._label} sent a response the SDK could not read: {shorten(str(exc))}")

    def _translate_status(self, exc: openai.APIStatusError) -> LLMError:
        status = exc.status_code
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = shorten(str(body.get("message") or exc.message))
        if status == 429 and exc.code == "insufficient_quota":
            return LLMRequestError(f"{self._label} says the account's quota is used up (HTTP 429): {detail}")
        if status in _TRANSIENT_STATUSES or status >= 500:
            return ProviderUnavailable(
                f"{self._label} answered HTTP {status}: {detail}",
                retry_after_s=retry_after_s(exc.response.headers),
                status=status,
            )
        if status == 401:
            # The provider's message quotes part of the key: leave it out.
            return LLMRequestError(f"{self._label} rejected the API key (HTTP 401); check OPENAI_API_KEY")
        if status == 404:
            return LLMRequestError(f"{self._label} answered HTTP 404: {detail}; check LLM_MODEL and LLM_BASE_URL")
        return LLMRequestError(f"{self._label} rejected the request (HTTP {status}): {detail}")

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._client.close()


def build_openai_client(settings: Settings) -> LLMClient:
    """The `openai` provider's factory (entry point `agentkit.llm_providers`: openai)."""
    return OpenAILLMClient.from_settings(settings)
