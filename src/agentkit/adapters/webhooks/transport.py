"""HttpWebhookTransport: one POST of a delivery, signed per the Standard Webhooks spec, to a checked address.

Headers (https://www.standardwebhooks.com): `webhook-id` (the delivery's id, the same on every
retry), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
(`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the WEBHOOK_SECRET). A receiver verifies
with any Standard Webhooks library, e.g. `standardwebhooks.Webhook(secret).verify(body, headers)`.
"""

import asyncio
import base64
import binascii
import math
import time
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Final

import httpx
from standardwebhooks import Webhook

from agentkit.adapters.tools.http_fetch.targets import pinned_request
from agentkit.adapters.webhooks.guard import TargetUnresolvable, WebhookURLGuard
from agentkit.application.errors import InvalidCallbackURL
from agentkit.application.ports.webhook_transport import WebhookTransport
from agentkit.domain.webhooks import AttemptOutcome, WebhookDelivery

SECRET_PREFIX: Final = "whsec_"  # noqa: S105 - the prefix of every secret, not one
MIN_SECRET_BYTES: Final = 24
MAX_SECRET_BYTES: Final = 64
USER_AGENT: Final = "AgentKit-Webhooks/0.1"


def signer(secret: str) -> Webhook:
    """The Standard Webhooks signer for a `whsec_<base64>` secret.

    Raises:
        ValueError: not `whsec_` and base64 of 24 to 64 bytes (the spec's recommended sizes).
    """
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(
            f"expected {SECRET_PREFIX} followed by base64 (make one with: echo whsec_$(openssl rand -base64 32))"
        )
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"the part after {SECRET_PREFIX} is not base64") from None
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(f"the key is {len(key)} bytes; use {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES}")
    return Webhook(secret)


class HttpWebhookTransport(WebhookTransport):
    """Signs and POSTs a delivery once, over a fresh connection pinned to the address the guard checked.

    A fresh connection each time (no keep-alive), as http_fetch does: a connection opened for one
    name is never reused for another name on the same address. The TLS context is shared.

    The URL is checked again at every attempt (a host that resolves to a refused address now fails
    the delivery; one that does not resolve now is retried). Redirects are not followed. The answer's
    body is not read: only its status (and Retry-After) matter. No proxy from the environment is used.

    Args:
        guard: The SSRF check, which also picks the address.
        signer: Signs with the WEBHOOK_SECRET.
        timeout_s: One attempt's bound, connection to answer (WEBHOOK_TIMEOUT_S).
        transport: The httpx transport; tests may pass their own. By default a fresh one per attempt.
    """

    def __init__(
        self,
        *,
        guard: WebhookURLGuard,
        signer: Webhook,
        timeout_s: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._guard = guard
        self._signer = signer
        self._timeout_s = timeout_s
        self._transport = transport
        # Built once: loading the CA bundle takes about 20 ms of CPU, on the event loop, per context.
        self._tls = httpx.create_ssl_context()

    async def post(self, delivery: WebhookDelivery, *, at: datetime) -> AttemptOutcome:
        """POST once; never raises (every failure is an outcome)."""
        began = time.monotonic()

        def took() -> float:
            return (time.monotonic() - began) * 1000

        try:
            target = await self._guard.target(delivery.url)
        except TargetUnresolvable as exc:
            return AttemptOutcome(duration_ms=took(), error=str(exc), retryable=True)
        except InvalidCallbackURL as exc:
            return AttemptOutcome(duration_ms=took(), error=f"refused: {exc}")
        timestamp = str(math.floor(at.timestamp()))
        headers = {
            "User-Agent": USER_AGENT,
            "Content-Type": "application/json",
            "webhook-id": delivery.id,
            "webhook-timestamp": timestamp,
            "webhook-signature": self._signer.sign(delivery.id, at, delivery.payload),
        }
        transport = self._transport or httpx.AsyncHTTPTransport(
            verify=self._tls, limits=httpx.Limits(max_keepalive_connections=0), retries=0
        )
        try:
            async with (
                asyncio.timeout(self._timeout_s),
                httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False) as client,
            ):
                request = pinned_request(client, "POST", target, headers, content=delivery.payload.encode())
                response = await client.send(request, stream=True)
                await response.aclose()
        except (TimeoutError, httpx.TimeoutException):
            return AttemptOutcome(
                duration_ms=took(), error=f"no answer within {self._timeout_s:g} s (WEBHOOK_TIMEOUT_S)", retryable=True
            )
        except httpx.HTTPError as exc:
            return AttemptOutcome(
                duration_ms=took(), error=f"the request failed: {type(exc).__name__}: {exc}", retryable=True
            )
        return _outcome(response, took())


def _outcome(response: httpx.Response, duration_ms: float) -> AttemptOutcome:
    status = response.status_code
    if 200 <= status < 300:
        return AttemptOutcome(duration_ms=duration_ms, status_code=status)
    said = f"the receiver answered {status} {response.reason_phrase}".rstrip()
    if status == 429 or status >= 500:
        return AttemptOutcome(
            duration_ms=duration_ms,
            status_code=status,
            error=said,
            retryable=True,
            retry_after_s=_retry_after(response.headers.get("retry-after")),
        )
    if 300 <= status < 400:
        said += " (redirects are not followed: give the final URL)"
    return AttemptOutcome(duration_ms=duration_ms, status_code=status, error=said)


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds: a number of seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, moment.timestamp() - time.time())
