"""The Gemini adapter: generateContent with function declarations, through the official google-genai SDK.

The SDK's retries are off (`HttpRetryOptions(attempts=1)`, which also stops its implicit retries
of dropped connections): `RetryingLLMClient` is the one retry policy. The adapter always sends
through an httpx client of its own (or the one it is given), so transport failures arrive as
httpx exceptions whatever HTTP backend the SDK would pick. `stream` uses the SDK's
`generate_content_stream` (see `gemini_stream` for how the chunks are read).
"""

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
from google import genai
from google.genai import errors, types

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.errors import ProviderUnavailable, retry_after_s, shorten
from agentkit.adapters.llm.gemini_stream import ResponseAssembler
from agentkit.adapters.llm.gemini_translate import from_gemini_response, to_gemini_contents, to_gemini_tools
from agentkit.application.errors import LLMError, LLMRequestError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMDelta, LLMResponse, Message
from agentkit.domain.tools import ToolSchema

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
_TRANSIENT_STATUSES = frozenset({408, 429})
# What the SDK raises for a failed call: an error answer, a transport failure, an answer it cannot read.
_SDK_ERRORS = (errors.APIError, httpx.TransportError, ValueError)
_RETRY_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


class GeminiLLMClient(LLMClient):
    """Gemini behind the LLMClient port; one request per call, no retries of its own.

    Args:
        client: The SDK client (built with `HttpRetryOptions(attempts=1)`).
        model: The model name sent with every request.
        temperature: Sampling temperature, or None for the model's default.
        max_tokens: The output token limit, or None for the model's default.
        http_client: The httpx client the SDK sends through; `aclose` closes it (the SDK leaves
            a client it was given open).
    """

    def __init__(
        self,
        client: genai.Client,
        *,
        model: str,
        temperature: float | None = None,
        max_tokens: int | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._http_client = http_client

    @classmethod
    def from_config(cls, config: LLMConfig, *, http_client: httpx.AsyncClient | None = None) -> "GeminiLLMClient":
        """The client the LLM_* variables describe.

        Args:
            config: Settings `provider_checks.check_gemini` accepted (the `gemini` provider's
                factory checks them first). Reads LLM_MODEL, LLM_BASE_URL, GEMINI_API_KEY,
                LLM_TEMPERATURE, LLM_MAX_TOKENS and LLM_REQUEST_TIMEOUT_S.
            http_client: An httpx client to send requests through (tests pass one with a
                `MockTransport`); by default the adapter makes one. `aclose` closes it either way.
        """
        http_client = http_client or httpx.AsyncClient()
        options = types.HttpOptions(
            base_url=config.llm_base_url,
            timeout=round(config.llm_request_timeout_s * 1000),  # the SDK counts milliseconds
            retry_options=types.HttpRetryOptions(attempts=1),
            httpx_async_client=http_client,
        )
        # vertexai=False: an ambient GOOGLE_GENAI_USE_VERTEXAI must not switch the backend.
        sdk = genai.Client(api_key=config.gemini_api_key, vertexai=False, http_options=options)
        return cls(
            sdk,
            model=config.llm_model or DEFAULT_GEMINI_MODEL,
            temperature=config.llm_temperature,
            max_tokens=config.llm_max_tokens,
            http_client=http_client,
        )

    @property
    def provider(self) -> str:
        """Always `gemini`."""
        return "gemini"

    @property
    def model(self) -> str:
        """The model every request names."""
        return self._model

    @property
    def parameters(self) -> dict[str, Any]:
        """The sampling options every request sends."""
        options = {"temperature": self._temperature, "max_output_tokens": self._max_tokens}
        return {name: value for name, value in options.items() if value is not None}

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Send one generateContent request and translate the answer.

        Raises:
            ProviderUnavailable: rate limit, timeout, dropped connection or server error.
            LLMRequestError: the request, the key or the model was rejected.
        """
        contents, config = self._request(messages, tools)
        try:
            response = await self._client.aio.models.generate_content(
                model=self._model, contents=contents, config=config
            )
        except _SDK_ERRORS as exc:
            raise _translate_sdk_error(exc) from exc
        return from_gemini_response(response)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """Send one streamGenerateContent request; yield the fragments as they come, then the response `chat` gives.

        Raises:
            ProviderUnavailable: as `chat`; also a stream that breaks off, or ends without a
                finish reason.
            LLMRequestError: as `chat`.
        """
        assembler = ResponseAssembler()
        async for chunk in self._chunks(*self._request(messages, tools)):
            for fragment in assembler.feed(chunk):
                yield fragment
        if not assembler.finished:
            raise ProviderUnavailable("Gemini's stream ended before the answer did (no finishReason)")
        yield assembler.response()

    async def _chunks(
        self, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> AsyncIterator[types.GenerateContentResponse]:
        # The SDK sends the request when the first chunk is asked for: its errors come while iterating.
        chunks: AsyncIterator[types.GenerateContentResponse] | None = None
        started = False
        try:
            chunks = await self._client.aio.models.generate_content_stream(
                model=self._model, contents=contents, config=config
            )
            async for chunk in chunks:
                started = True
                yield chunk
        except _SDK_ERRORS as exc:
            if started and isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.TimeoutException):
                raise ProviderUnavailable(
                    f"the connection to Gemini broke during its answer: {type(exc).__name__}: {exc}"
                ) from exc
            raise _translate_sdk_error(exc) from exc
        finally:
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()

    def _request(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> tuple[list[types.Content], types.GenerateContentConfig]:
        system, contents = to_gemini_contents(messages)
        config = types.GenerateContentConfig(
            system_instruction=system,
            tools=list(to_gemini_tools(tools)) or None,
            temperature=self._temperature,
            max_output_tokens=self._max_tokens,
            # The SDK would call Python callables itself; we declare schemas and run tools ourselves.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        return list(contents), config

    async def aclose(self) -> None:
        """Close the SDK client and the httpx client it sends through."""
        await self._client.aio.aclose()
        if self._http_client is not None:
            await self._http_client.aclose()


def _translate_sdk_error(exc: Exception) -> LLMError:
    if isinstance(exc, errors.APIError):
        return _translate_api_error(exc)
    if isinstance(exc, httpx.TimeoutException):
        return ProviderUnavailable("Gemini did not answer in time")
    if isinstance(exc, httpx.TransportError):
        return ProviderUnavailable(f"could not reach Gemini: {type(exc).__name__}: {exc}")
    # a ValueError: pydantic's ValidationError among them
    return LLMRequestError(f"Gemini sent a response the SDK could not read: {shorten(str(exc))}")


def _translate_api_error(exc: errors.APIError) -> LLMError:
    status = exc.code
    http = f"HTTP {status} {exc.status}" if exc.status else f"HTTP {status}"
    detail = shorten(str(exc.message or exc))
    if status in _TRANSIENT_STATUSES or status >= 500:
        return ProviderUnavailable(
            f"Gemini answered {http}: {detail}",
            retry_after_s=_retry_after(exc),
            status=status,
        )
    if status == 401 or "API_KEY_INVALID" in _reasons(exc.details):
        # Gemini answers a bad key with 400 INVALID_ARGUMENT and reason API_KEY_INVALID.
        return LLMRequestError(f"Gemini rejected the API key ({http}); check GEMINI_API_KEY")
    if status == 403:
        return LLMRequestError(f"Gemini refused access ({http}): {detail}; check GEMINI_API_KEY and LLM_MODEL")
    if status == 404:
        return LLMRequestError(f"Gemini answered HTTP 404: {detail}; check LLM_MODEL and LLM_BASE_URL")
    return LLMRequestError(f"Gemini rejected the request ({http}): {detail}")


def _retry_after(exc: errors.APIError) -> float | None:
    headers: Mapping[str, str] | None = getattr(exc.response, "headers", None)
    from_header = retry_after_s(headers) if headers is not None else None
    if from_header is not None:
        return from_header
    # Gemini says when to come back in the body: a google.rpc.RetryInfo detail, "retryDelay": "37s".
    for detail in _details(exc.details):
        match = _RETRY_DELAY.match(str(detail.get("retryDelay", "")))
        if match:
            return float(match.group(1))
    return None


def _details(body: Any) -> list[dict[str, Any]]:
    error = body.get("error", body) if isinstance(body, dict) else {}
    details = error.get("details") if isinstance(error, dict) else None
    return [item for item in details if isinstance(item, dict)] if isinstance(details, list) else []


def _reasons(body: Any) -> set[str]:
    return {str(detail.get("reason")) for detail in _details(body) if detail.get("reason")}
