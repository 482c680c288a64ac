"""DeliverWebhooks: claim the due deliveries, POST each once, store what came of it."""

import asyncio
import random
from collections.abc import Callable
from datetime import timedelta

import structlog

from agentkit.application.backoff import Backoff, until_stored
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.application.ports.webhook_transport import WebhookTransport
from agentkit.domain.webhooks import DeliveryStatus, RetryPolicy, WebhookDelivery, record_attempt

logger = structlog.get_logger(__name__)

# How long a sender may keep retrying the write of an attempt's outcome through a store outage; past
# it the hold lapses and the delivery is sent again (its id unchanged: the receiver drops the repeat).
_SAVE_RETRY_S = 30.0


class DeliverWebhooks:
    """The sender's two steps: `claim` due deliveries, then `attempt` each (concurrently, by the caller).

    Rules:
    - A claimed delivery is held for `hold_s` (longer than an attempt can take), so no other sender
      sends it meanwhile; a sender that dies lets the hold lapse and another takes the delivery up.
    - One attempt is one POST. A 2xx answer delivers it; a connection error, a timeout, 5xx or 429 is
      retried after an exponential backoff with jitter (or the receiver's longer Retry-After), up to
      the policy's attempts; any other answer, or a URL refused at send time, fails it at once.
    - Every attempt is stored on the delivery: when, the status code or the error, the duration.

    Args:
        outbox: The stored deliveries.
        transport: Signs and POSTs one delivery.
        clock: Wall time for due times and attempts.
        policy: Attempts and backoff.
        hold_s: How long a claim holds a delivery.
        jitter: A number in [0, 1) per retry; tests pass a constant.
    """

    def __init__(
        self,
        *,
        outbox: WebhookOutbox,
        transport: WebhookTransport,
        clock: Clock,
        policy: RetryPolicy,
        hold_s: float,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._outbox = outbox
        self._transport = transport
        self._clock = clock
        self._policy = policy
        self._hold = timedelta(seconds=hold_s)
        self._jitter = jitter

    async def claim(self, limit: int) -> list[WebhookDelivery]:
        """Take up to `limit` due deliveries for this sender."""
        now = self._clock.now()
        return await self._outbox.claim_due(now, hold_until=now + self._hold, limit=limit)

    async def attempt(self, delivery: WebhookDelivery) -> WebhookDelivery:
        """POST the delivery once and store the outcome; the delivery as it now stands."""
        at = self._clock.now()
        outcome = await self._transport.post(delivery, at=at)
        updated = record_attempt(delivery, outcome, at=at, policy=self._policy, jitter=self._jitter())
        log = logger.bind(run_id=delivery.run_id, webhook_id=delivery.id, attempt=len(updated.attempts))
        if updated.status is DeliveryStatus.DELIVERED:
            log.info("webhook_delivered", status_code=outcome.status_code, duration_ms=round(outcome.duration_ms, 1))
        elif updated.status is DeliveryStatus.FAILED:
            log.warning("webhook_failed", reason=updated.failure_reason)
        else:
            log.info("webhook_retrying", error=updated.attempts[-1].error, next_attempt_at=updated.next_attempt_at)
        saved = await until_stored(
            lambda: self._outbox.save(updated, attempts_before=len(delivery.attempts)),
            what="webhook_attempt",
            deadline=self._clock.monotonic() + _SAVE_RETRY_S,
            clock=self._clock,
            sleep=asyncio.sleep,
            backoff=Backoff(first_s=0.2, cap_s=5.0),
        )
        if not saved:
            log.warning("webhook_attempt_fenced", detail="another sender took the delivery over")
        return updated
