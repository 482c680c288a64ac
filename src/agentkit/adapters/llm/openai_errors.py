"""The `openai` SDK's errors as the port's errors, each naming what the server itself said.

A run that fails on a provider error shows this message in its failure reason ("the LLM call
failed: ..."), so it carries the server's own words, cut to one line, with the API key taken out.
What the SDK makes of an error body differs by server, so the detail is looked for in each shape
seen in practice:

- OpenAI, llama-cpp-python, Ollama, llama.cpp's server: `{"error": {"message": ...}}` (the SDK
  hands over the inner object as `exc.body`);
- vLLM: `{"object": "error", "message": ...}`;
- FastAPI-based servers: `{"detail": "..."}` or `{"detail": [{"loc": [...], "msg": ...}]}`;
- `{"error": "..."}` (the SDK hands over the string), plain text, or a proxy's HTML page.
"""

import re
from collections.abc import Iterable
from typing import Any

import httpx
import openai

from agentkit.adapters.llm.errors import ProviderUnavailable, retry_after_s, shorten
from agentkit.application.errors import LLMError, LLMRequestError

# Statuses worth another attempt: timeout, lock conflict, rate limit, and any server error.
_TRANSIENT_STATUSES = frozenset({408, 409, 429})
_TAG = re.compile(r"<[^>]*>")
_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_*-]{4})[A-Za-z0-9_*-]+")
# vLLM, llama-cpp-python and OpenAI: "maximum context length"; llama.cpp's server: "context size".
_CONTEXT_OVERFLOW = re.compile(r"context[ _](length|size|window)", re.IGNORECASE)


def translate_openai_error(exc: openai.OpenAIError, *, label: str, secrets: Iterable[str] = ()) -> LLMError:
    """The port's error for an SDK error.

    Args:
        exc: What the SDK raised.
        label: How to name the server ("openai", or "the OpenAI-compatible server at URL").
        secrets: Values that must never appear in a message (the API key).
    """
    if isinstance(exc, openai.APITimeoutError):
        return ProviderUnavailable(f"{label} did not answer in time")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return ProviderUnavailable(f"could not reach {label}: {type(cause).__name__}: {cause}")
    if isinstance(exc, openai.APIStatusError):
        return _translate_status(exc, label, shorten(_redacted(server_detail(exc), secrets)))
    detail = shorten(_redacted(str(exc), secrets))
    return LLMRequestError(f"{label} sent a response the SDK could not read: {detail}")


def translate_openai_stream_error(exc: openai.OpenAIError, *, label: str, secrets: Iterable[str] = ()) -> LLMError:
    """The port's error for an SDK error raised while a stream was being read (its status was 200).

    - an error event in the stream (`data: {"error": {...}}`, which the SDK raises as a bare
      `APIError`): transient unless it says the request was at fault (a 4xx `code` other than
      408, 409 and 429, or an `invalid_request` type); a server that accepted the request and
      then failed mostly failed on its side;
    - the connection broke or a read timed out: transient, and said as such;
    - anything else: as `translate_openai_error`.
    """
    if type(exc) is openai.APIError:
        detail = shorten(_redacted(server_detail_of(exc.body) or exc.message, secrets))
        if _is_request_fault(exc):
            return LLMRequestError(f"{label} reported an error in its stream: {detail}")
        return ProviderUnavailable(f"{label} reported an error in its stream: {detail}")
    if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
        cause = exc.__cause__ or exc
        return ProviderUnavailable(
            f"the connection to {label} broke during its answer: {type(cause).__name__}: {cause}"
        )
    return translate_openai_error(exc, label=label, secrets=secrets)


def _is_request_fault(exc: openai.APIError) -> bool:
    code = exc.code or ""
    if code.isdigit():
        status = int(code)
        return 400 <= status < 500 and status not in _TRANSIENT_STATUSES
    kind = (exc.type or "").lower()
    return "invalid_request" in kind or "badrequest" in kind


def _translate_status(exc: openai.APIStatusError, label: str, detail: str) -> LLMError:
    status = exc.status_code
    if status == 429 and exc.code == "insufficient_quota":
        return LLMRequestError(f"{label} says the account's quota is used up (HTTP 429): {detail}")
    if status in _TRANSIENT_STATUSES or status >= 500:
        return ProviderUnavailable(
            f"{label} answered HTTP {status}: {detail}",
            retry_after_s=retry_after_s(exc.response.headers),
            status=status,
        )
    if status == 401:
        # The provider's message quotes part of the key: leave it out.
        setting = "AZURE_OPENAI_API_KEY or LLM_TOKEN_PROVIDER" if label.startswith("Azure") else "OPENAI_API_KEY"
        return LLMRequestError(f"{label} rejected the API key (HTTP 401); check {setting}")
    if status == 404:
        return LLMRequestError(f"{label} answered HTTP 404: {detail}; check LLM_MODEL and LLM_BASE_URL")
    if exc.code == "context_length_exceeded" or _CONTEXT_OVERFLOW.search(detail):
        return LLMRequestError(
            f"{label} rejected the request (HTTP {status}): {detail.rstrip('.')}; the conversation no longer fits the "
            "model's context window (serve the model with a longer context, or shorten tool output with "
            "TOOL_OUTPUT_MAX_CHARS)"
        )
    return LLMRequestError(f"{label} rejected the request (HTTP {status}): {detail}")


def server_detail(exc: openai.APIStatusError) -> str:
    """What the server said about the error (not yet shortened), or "no details given"."""
    detail = server_detail_of(exc.body)
    if not detail.strip():
        try:
            detail = _TAG.sub(" ", exc.response.text)
        except httpx.ResponseNotRead:  # a streamed body, never read: it said nothing we can show
            detail = ""
    return detail if detail.strip() else "no details given"


def server_detail_of(body: Any) -> str:
    """The message in an error body of any shape the module docstring lists ("" when there is none)."""
    if isinstance(body, str):
        return _TAG.sub(" ", body)
    if not isinstance(body, dict):
        return ""
    for key in ("message", "error", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, dict):
            return server_detail_of(value)
        if isinstance(value, list) and value:
            return "; ".join(_validation_item(item) for item in value)
    return ""


def _validation_item(item: Any) -> str:
    # FastAPI's 422: {"loc": ["body", "messages", 2, "content"], "msg": "field required", ...}
    if isinstance(item, dict) and "msg" in item:
        where = ".".join(str(part) for part in item.get("loc", ()))
        return f"{where}: {item['msg']}" if where else str(item["msg"])
    return str(item)


def _redacted(detail: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if len(secret) >= 8:  # a short placeholder key ("test", "unused") is no secret and too common
            detail = detail.replace(secret, "[redacted]")
    return _KEY_LIKE.sub(r"\1…[redacted]", detail)
