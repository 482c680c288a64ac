"""An in-memory WebhookOutbox (state in memory: one process, gone when it stops)."""

from datetime import datetime

import msgspec

from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.domain.ids import RunId
from agentkit.domain.webhooks import DeliveryStatus, WebhookDelivery


class InMemoryWebhookOutbox(WebhookOutbox):
    """Deliveries in a dict; the same rules as the Postgres outbox (holds, fencing)."""

    def __init__(self) -> None:
        self._deliveries: dict[str, WebhookDelivery] = {}

    async def add(self, delivery: WebhookDelivery) -> bool:
        """Store a new delivery unless its id is taken."""
        if delivery.id in self._deliveries:
            return False
        self._deliveries[delivery.id] = delivery
        return True

    async def claim_due(self, now: datetime, *, hold_until: datetime, limit: int) -> list[WebhookDelivery]:
        """Take the due pending deliveries, earliest first, holding them until `hold_until`."""
        due = sorted(
            (d for d in self._deliveries.values() if d.status is DeliveryStatus.PENDING and d.next_attempt_at <= now),
            key=lambda d: (d.next_attempt_at, d.id),
        )[:limit]
        taken = [msgspec.structs.replace(d, next_attempt_at=hold_until) for d in due]
        for delivery in taken:
            self._deliveries[delivery.id] = delivery
        return taken

    async def save(self, delivery: WebhookDelivery, *, attempts_before: int) -> bool:
        """Store the attempt's outcome, if the delivery still stands where it was claimed."""
        stored = self._deliveries.get(delivery.id)
        if stored is None or stored.status is not DeliveryStatus.PENDING or len(stored.attempts) != attempts_before:
            return False
        self._deliveries[delivery.id] = delivery
        return True

    def forget(self, run_id: RunId) -> None:
        """Drop the run's deliveries that are over (its repository forgot the run); pending ones are still sent."""
        for key in [key for key, d in self._deliveries.items() if d.run_id == run_id]:
            if self._deliveries[key].status is not DeliveryStatus.PENDING:
                del self._deliveries[key]

    async def of_run(self, run_id: RunId) -> list[WebhookDelivery]:
        """The run's deliveries, oldest first."""
        found = [d for d in self._deliveries.values() if d.run_id == run_id]
        return sorted(found, key=lambda d: (d.created_at, d.id))
