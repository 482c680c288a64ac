"""GET /v1/runs/{id}/webhooks: a run's webhook deliveries and their attempts."""

from datetime import datetime
from typing import Literal

import msgspec

from agentkit.domain.run import Run
from agentkit.domain.webhooks import DeliveryStatus, WebhookDelivery


class WebhookAttemptView(msgspec.Struct, kw_only=True):
    """One POST of a delivery."""

    attempt: int
    at: datetime
    duration_ms: float
    status_code: int | None
    error: str | None


class WebhookDeliveryView(msgspec.Struct, kw_only=True):
    """One event of the run on its way to the callback URL, with every attempt so far.

    `id` is the `webhook-id` header the receiver got, the same on every attempt: a receiver drops
    the repeats of an id it has processed. `next_attempt_at` is set while the delivery is pending.
    """

    id: str
    event: str
    url: str
    status: Literal["pending", "delivered", "failed"]
    attempts: list[WebhookAttemptView]
    created_at: datetime
    next_attempt_at: datetime | None
    finished_at: datetime | None
    failure_reason: str | None


class WebhookListView(msgspec.Struct, kw_only=True):
    """A run's webhook deliveries, oldest first."""

    run_id: str
    deliveries: list[WebhookDeliveryView]


def delivery_view(delivery: WebhookDelivery) -> WebhookDeliveryView:
    """The wire view of a delivery."""
    return WebhookDeliveryView(
        id=delivery.id,
        event=delivery.event,
        url=delivery.url,
        status=delivery.status.value,
        attempts=[
            WebhookAttemptView(
                attempt=a.number, at=a.at, duration_ms=a.duration_ms, status_code=a.status_code, error=a.error
            )
            for a in delivery.attempts
        ],
        created_at=delivery.created_at,
        next_attempt_at=delivery.next_attempt_at if delivery.status is DeliveryStatus.PENDING else None,
        finished_at=delivery.finished_at,
        failure_reason=delivery.failure_reason,
    )


def webhook_list_view(run: Run, deliveries: list[WebhookDelivery]) -> WebhookListView:
    """The wire view of a run's deliveries."""
    return WebhookListView(run_id=run.id, deliveries=[delivery_view(d) for d in deliveries])
