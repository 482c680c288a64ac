"""What the search adapters share: one request, with the provider's errors put into words."""

from typing import Any, TypeVar

import httpx
import msgspec

from agentkit.adapters.tools.errors import SearchFailed

T = TypeVar("T")


async def request_json(
    provider: str,
    transport: httpx.AsyncBaseTransport | None,
    timeout_s: float,
    request: httpx.Request,
    response_type: type[T],
) -> T:
    """Send `request` and decode its JSON body as `response_type`.

    Raises:
        SearchFailed: a network error, a timeout, an error status or an unexpected body.
    """
    try:
        async with httpx.AsyncClient(transport=transport, timeout=timeout_s, trust_env=False) as client:
            response = await client.send(request)
    except httpx.TimeoutException:
        raise SearchFailed(f"{provider} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise SearchFailed(f"cannot reach {provider}: {type(exc).__name__}") from None
    if response.status_code in (401, 403):
        raise SearchFailed(f"{provider} rejected the API key (HTTP {response.status_code}); check SEARCH_API_KEY")
    if response.status_code == 429:
        raise SearchFailed(f"{provider} says too many requests (HTTP 429); try again later")
    if response.status_code >= 400:
        raise SearchFailed(f"{provider} answered HTTP {response.status_code}")
    try:
        return msgspec.json.decode(response.content, type=response_type)
    except msgspec.DecodeError as exc:
        raise SearchFailed(f"{provider} sent an unexpected response: {exc}") from None


def clip(text: Any, limit: int = 500) -> str:
    """A result field as a short single-line string."""
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 1] + "…"
