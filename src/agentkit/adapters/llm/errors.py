"""How provider adapters report failures to the retry policy.

An adapter makes one request per `chat` call and turns every SDK error into one of the port's
errors. Transient trouble is a `ProviderUnavailable` (an `LLMUnavailable`) that carries what the
server said about when to come back; `RetryingLLMClient` decides whether and when to try again.

LLMError (agentkit.application.errors)
 ├── LLMRequestError          rejected for good: bad request, bad key, unknown model
 └── LLMUnavailable
      └── ProviderUnavailable one attempt hit transient trouble (429, 5xx, timeout, dropped connection)
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from agentkit.application.errors import LLMUnavailable

_DETAIL_MAX_CHARS = 300


class ProviderUnavailable(LLMUnavailable):
    """One provider request failed with trouble that may pass; the retry policy may try again.

    Attributes:
        retry_after_s: How long the server asked us to wait (`Retry-After`), when it said.
        status: The HTTP status, when there was a response.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.status = status


def retry_after_s(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """The wait a response asks for: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date.

    Args:
        headers: The response headers (a case-insensitive mapping such as `httpx.Headers`).
        now: The current time, for HTTP dates (defaults to the system clock).

    Returns:
        Seconds to wait (never negative), or None when the headers say nothing usable.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT, even when it forgets to say so
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def shorten(detail: str) -> str:
    """A provider's error detail cut to one readable line for messages and logs."""
    line = " ".join(detail.split())
    return line if len(line) <= _DETAIL_MAX_CHARS else line[: _DETAIL_MAX_CHARS - 1] + "…"
