"""The `anthropic` SDK's errors as the port's: transient trouble for the retry policy, the rest rejected.

Transient: 408, 409, 429, any 5xx and Anthropic's 529 `overloaded_error`, timeouts and dropped
connections, each with the server's `retry-after`. Rejected for good: 400 (a prompt too long for
the context window says so), 401 (the key), 403, 404 (the model), 413. An `error` event inside a
stream (whose HTTP status was 200) is judged by its `error.type`.
"""

from collections.abc import Iterable

import anthropic

from agentkit.adapters.llm.errors import ProviderUnavailable, retry_after_s, shorten
from agentkit.adapters.llm.openai_errors import server_detail_of
from agentkit.application.errors import LLMError, LLMRequestError

_TRANSIENT_STATUSES = frozenset({408, 409, 429})
_TRANSIENT_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
LABEL = "Anthropic"


def translate_anthropic_error(exc: anthropic.AnthropicError, *, secrets: Iterable[str] = ()) -> LLMError:
    """The port's error for an SDK error (raised by the request, or while its stream was read)."""
    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderUnavailable(f"{LABEL} did not answer in time")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        return ProviderUnavailable(f"could not reach {LABEL}: {type(cause).__name__}: {cause}")
    if isinstance(exc, anthropic.APIStatusError):
        detail = shorten(_redacted(server_detail_of(exc.body) or exc.message, secrets))
        if exc.status_code == 200:  # an `error` event in a stream that had started well
            return _stream_error(exc, detail)
        return _translate_status(exc, detail)
    return LLMRequestError(f"{LABEL} sent a response the SDK could not read: {shorten(_redacted(str(exc), secrets))}")


def _stream_error(exc: anthropic.APIStatusError, detail: str) -> LLMError:
    kind = _error_type(exc)
    if kind in _TRANSIENT_TYPES or not kind:
        return ProviderUnavailable(f"{LABEL} reported an error in its stream ({kind or 'unknown'}): {detail}")
    return LLMRequestError(f"{LABEL} reported an error in its stream ({kind}): {detail}")


def _translate_status(exc: anthropic.APIStatusError, detail: str) -> LLMError:
    status = exc.status_code
    if status in _TRANSIENT_STATUSES or status >= 500:
        return ProviderUnavailable(
            f"{LABEL} answered HTTP {status}: {detail}",
            retry_after_s=retry_after_s(exc.response.headers),
            status=status,
        )
    if status == 401:
        return LLMRequestError(f"{LABEL} rejected the API key (HTTP 401); check ANTHROPIC_API_KEY")
    if status == 404:
        return LLMRequestError(f"{LABEL} answered HTTP 404: {detail}; check LLM_MODEL and LLM_BASE_URL")
    if "prompt is too long" in detail.lower():
        return LLMRequestError(
            f"{LABEL} rejected the request (HTTP {status}): {detail.rstrip('.')}; the conversation no longer fits "
            "the model's context window (shorten tool output with TOOL_OUTPUT_MAX_CHARS)"
        )
    return LLMRequestError(f"{LABEL} rejected the request (HTTP {status}): {detail}")


def _error_type(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else ""


def _redacted(detail: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if len(secret) >= 8:  # a short placeholder key is no secret and too common
            detail = detail.replace(secret, "[redacted]")
    return detail
