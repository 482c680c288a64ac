"""The WebhookOutbox port: deliveries waiting to be sent, durable across restarts, shared by every process."""

from abc import abstractmethod
from datetime import datetime
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.webhooks import WebhookDelivery


class WebhookOutbox(Protocol):
    """Stores webhook deliveries and hands the due ones to one sender at a time.

    A sender claims due deliveries (`claim_due`), which holds them for it until `hold_until`; it
    POSTs outside any transaction and stores the outcome (`save`). A sender that dies while holding
    a delivery lets its hold lapse, and another sender (in this process or another) takes it again.
    """

    @abstractmethod
    async def add(self, delivery: WebhookDelivery) -> bool:
        """Store a new delivery; False (nothing changed) when one with its id is already stored."""

    @abstractmethod
    async def claim_due(self, now: datetime, *, hold_until: datetime, limit: int) -> list[WebhookDelivery]:
        """Take up to `limit` pending deliveries due by `now`, earliest first, holding each until `hold_until`.

        Two senders claiming at once never get the same delivery. The deliveries come back as stored
        (their `next_attempt_at` is the hold).
        """

    @abstractmethod
    async def save(self, delivery: WebhookDelivery, *, attempts_before: int) -> bool:
        """Store this version of a delivery after an attempt, if it still stands where it was claimed.

        Fencing: the write is refused (False) unless the stored delivery is pending with
        `attempts_before` attempts, so a sender whose hold lapsed cannot overwrite the one that took over.
        """

    @abstractmethod
    async def of_run(self, run_id: RunId) -> list[WebhookDelivery]:
        """The run's deliveries, oldest first."""
