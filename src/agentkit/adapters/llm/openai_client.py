"""The OpenAI adapter: Chat Completions with function tools, through the official async SDK.

`LLM_BASE_URL` points it at any OpenAI-compatible server (vLLM, Ollama, llama.cpp, a gateway).
The SDK's own retries are off (`max_retries=0`): `RetryingLLMClient` is the one retry policy.
`stream` asks for the same completion with `stream: true` (see `openai_stream` for how the chunks
are read).
"""

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.errors import ProviderUnavailable, shorten
from agentkit.adapters.llm.openai_errors import translate_openai_error, translate_openai_stream_error
from agentkit.adapters.llm.openai_stream import CompletionAssembler
from agentkit.adapters.llm.openai_translate import (
    ToolCallContent,
    from_openai_completion,
    to_openai_messages,
    to_openai_tools,
)
from agentkit.adapters.llm.token_provider import load_token_provider
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMDelta, LLMResponse, Message
from agentkit.domain.tools import ToolSchema

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"


class OpenAILLMClient(LLMClient):
    """Chat Completions behind the LLMClient port; one request per call, no retries of its own.

    Args:
        client: The SDK client (built with `max_retries=0`).
        model: The model name sent with every request.
        label: How errors name the provider ("openai", or the compatible server's URL).
        provider: The provider's name (`openai`, or `azure_openai` for the deployment API).
        temperature: Sampling temperature, or None for the server's default.
        max_tokens: The output token limit, or None for the server's default.
        max_tokens_field: `max_completion_tokens` for OpenAI itself; compatible servers mostly
            know only the older `max_tokens`.
        tool_call_content: What a tool-calling assistant message without text carries as
            `content` (`LLM_TOOL_CALL_CONTENT`; see `ToolCallContent`).
        text_tool_calls: Read an answer made only of JSON tool calls as those calls
            (`LLM_TEXT_TOOL_CALLS`; see `text_tool_calls`).
        parallel_tool_calls: Sent as `parallel_tool_calls` with the tools (false: one call a
            turn); None leaves it out, so the provider's default holds.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        model: str,
        label: str = "openai",
        provider: str = "openai",
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_tokens_field: str = "max_completion_tokens",
        tool_call_content: ToolCallContent = "empty",
        text_tool_calls: bool = False,
        parallel_tool_calls: bool | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._label = label
        self._provider = provider
        self._tool_call_content: ToolCallContent = tool_call_content
        self._text_tool_calls = text_tool_calls
        self._parallel_tool_calls = parallel_tool_calls
        self._options: dict[str, Any] = {}
        if temperature is not None:
            self._options["temperature"] = temperature
        if max_tokens is not None:
            self._options[max_tokens_field] = max_tokens

    @classmethod
    def from_config(cls, config: LLMConfig, *, http_client: httpx.AsyncClient | None = None) -> "OpenAILLMClient":
        """The client the LLM_* variables describe.

        Args:
            config: Settings `provider_checks.check_openai` accepted (the `openai` provider's
                factory checks them first). Reads LLM_MODEL, LLM_BASE_URL, OPENAI_API_KEY,
                LLM_TEMPERATURE, LLM_MAX_TOKENS, LLM_REQUEST_TIMEOUT_S, LLM_TOOL_CALL_CONTENT,
                LLM_TEXT_TOOL_CALLS and LLM_PARALLEL_TOOL_CALLS.
            http_client: An httpx client to send requests through (tests pass one with a
                `MockTransport`); by default the SDK makes its own.
        """
        base_url = config.llm_base_url
        sdk = openai.AsyncOpenAI(
            # a token provider (Entra ID for Azure's v1 API) is called before each request
            api_key=load_token_provider(config.llm_token_provider)
            if config.llm_token_provider
            else config.openai_api_key,
            base_url=base_url,
            timeout=config.llm_request_timeout_s,
            max_retries=0,
            # The SDK is typed for httpx2 but takes an httpx client as well (it checks both).
            http_client=cast(Any, http_client),
        )
        return cls(
            sdk,
            model=config.llm_model or DEFAULT_OPENAI_MODEL,
            label=f"the OpenAI-compatible server at {_shown_url(base_url)}" if base_url else "openai",
            temperature=config.llm_temperature,
            max_tokens=config.llm_max_tokens,
            max_tokens_field="max_tokens" if base_url else "max_completion_tokens",
            tool_call_content=config.llm_tool_call_content,
            text_tool_calls=config.llm_text_tool_calls,
            parallel_tool_calls=config.llm_parallel_tool_calls,
        )

    @classmethod
    def from_azure_config(cls, config: LLMConfig, *, http_client: httpx.AsyncClient | None = None) -> "OpenAILLMClient":
        """A client of Azure OpenAI's deployment API (`/openai/deployments/{LLM_MODEL}/...?api-version=`).

        Args:
            config: Settings `provider_checks.check_azure_openai` accepted: LLM_BASE_URL is the
                resource's endpoint, LLM_MODEL the deployment, AZURE_OPENAI_API_VERSION the
                api-version; AZURE_OPENAI_API_KEY (sent as `api-key`) or LLM_TOKEN_PROVIDER
                (an Entra ID token, sent as a bearer token).
            http_client: As in `from_config`.
        """
        endpoint = config.llm_base_url or ""
        token = load_token_provider(config.llm_token_provider) if config.llm_token_provider else None
        sdk = openai.AsyncAzureOpenAI(
            azure_endpoint=endpoint,
            api_version=config.azure_openai_api_version,
            api_key=config.azure_openai_api_key,
            azure_ad_token_provider=token,
            timeout=config.llm_request_timeout_s,
            max_retries=0,
            http_client=cast(Any, http_client),
        )
        return cls(
            sdk,
            model=config.llm_model,
            label=f"Azure OpenAI at {_shown_url(endpoint)}",
            provider="azure_openai",
            temperature=config.llm_temperature,
            max_tokens=config.llm_max_tokens,
            tool_call_content=config.llm_tool_call_content,
            parallel_tool_calls=config.llm_parallel_tool_calls,
        )

    @property
    def provider(self) -> str:
        """`openai`, or `azure_openai` for a client `from_azure_config` built."""
        return self._provider

    @property
    def model(self) -> str:
        """The model every request names."""
        return self._model

    @property
    def parameters(self) -> dict[str, Any]:
        """The sampling options every request sends."""
        return dict(self._options)

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Send one Chat Completions request and translate the answer.

        Raises:
            ProviderUnavailable: rate limit, timeout, dropped connection or server error.
            LLMRequestError: the request, the key or the model was rejected.
        """
        try:
            completion = await self._client.chat.completions.create(**self._request(messages, tools))
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        return from_openai_completion(completion, text_tool_names=self._text_tool_names(tools))

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """Send the request with `stream: true`; yield the fragments as they come, then the response `chat` gives.

        Usage comes in the stream's last chunk (`stream_options.include_usage`). With
        LLM_TEXT_TOOL_CALLS, text that may be tool calls is held back until it is known not to be
        (see `openai_stream`).

        Raises:
            ProviderUnavailable: as `chat`; also a stream that breaks off, reports an error, or
                ends without a finish reason.
            LLMRequestError: as `chat`, or an error the server reported in the stream about the request.
        """
        text_tool_names = self._text_tool_names(tools)
        try:
            chunks = await self._client.chat.completions.create(
                **self._request(messages, tools), stream=True, stream_options={"include_usage": True}
            )
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        assembler = CompletionAssembler(hold_text=bool(text_tool_names))
        try:
            async for chunk in chunks:
                for fragment in assembler.feed(chunk):
                    yield fragment
        except openai.OpenAIError as exc:
            raise translate_openai_stream_error(exc, label=self._label, secrets=(self._client.api_key,)) from exc
        except json.JSONDecodeError as exc:
            raise ProviderUnavailable(
                f"{self._label} sent a stream event that is not JSON: {shorten(exc.doc)}"
            ) from exc
        finally:
            await chunks.close()
        if not assembler.finished:
            raise ProviderUnavailable(f"{self._label}'s stream ended before the answer did (no finish_reason)")
        response = from_openai_completion(assembler.completion(), text_tool_names=text_tool_names)
        for fragment in assembler.rest(response):
            yield fragment
        yield response

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._model,
            "messages": to_openai_messages(messages, tool_call_content=self._tool_call_content),
            **self._options,
        }
        if tools:
            request["tools"] = to_openai_tools(tools)
            # "auto" is OpenAI's default with tools, but llama-cpp-python's function-calling
            # handler takes a missing tool_choice for "none" and drops the tools from the prompt.
            request["tool_choice"] = "auto"
            if self._parallel_tool_calls is not None:  # unset: the field is left out, the provider's default holds
                request["parallel_tool_calls"] = self._parallel_tool_calls
        return request

    def _text_tool_names(self, tools: Sequence[ToolSchema]) -> set[str]:
        return {tool.name for tool in tools} if self._text_tool_calls else set()

    def _error(self, exc: openai.OpenAIError) -> Exception:
        return translate_openai_error(exc, label=self._label, secrets=(self._client.api_key,))

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._client.close()


def _shown_url(url: str) -> str:
    """The URL without credentials or query (a gateway's key may sit in either), for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:  # not a number: check_openai refuses it, but from_config may be handed one directly
        port = None
    if port is not None:
        netloc = f"{netloc}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
