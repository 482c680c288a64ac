"""WebhookSender: the background sender of every process that executes runs (the API, `agentkit worker`)."""

import asyncio
import contextlib
import heapq
from datetime import datetime
from typing import Final

import structlog

from agentkit.application.ports.background_work import BackgroundWork
from agentkit.application.ports.clock import Clock
from agentkit.application.webhooks import DeliverWebhooks, DeliveryBell, WebhookNotifier
from agentkit.domain.webhooks import DeliveryStatus, WebhookDelivery

logger = structlog.get_logger(__name__)

# At shutdown: how long deliveries still being stored, then attempts in flight, may finish.
_FLUSH_S: Final = 3.0


class WebhookSender(BackgroundWork):
    """Claims due deliveries and attempts each as a task of its own, at most `concurrency` at once.

    A pass runs when the notifier rings (a delivery was stored here), when a retry this process
    scheduled falls due, and every `poll_s` in any case (deliveries stored by other processes, and
    ones whose sender died and whose hold lapsed). A slow receiver holds one of the places, never the
    pass, and never a run. A failed pass (the store is down) is logged and tried again at the next.

    Args:
        deliver: Claims and attempts deliveries.
        notifier: Flushed at stop, so an event seen just before is stored, not lost.
        bell: Rung when a delivery was stored in this process.
        clock: Tells when a retry falls due.
        poll_s: The longest pause between passes (WEBHOOK_POLL_S).
        concurrency: Attempts in flight at once.
    """

    def __init__(
        self,
        *,
        deliver: DeliverWebhooks,
        notifier: WebhookNotifier,
        bell: DeliveryBell,
        clock: Clock,
        poll_s: float,
        concurrency: int = 16,
    ) -> None:
        self._deliver = deliver
        self._notifier = notifier
        self._bell = bell
        self._clock = clock
        self._poll_s = poll_s
        self._concurrency = concurrency
        self._task: asyncio.Task[None] | None = None
        self._in_flight: set[asyncio.Task[None]] = set()
        self._due: list[datetime] = []  # retries scheduled here, soonest first

    async def start(self) -> None:
        """Start sending in the background (once)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="agentkit-webhook-sender")

    async def stop(self) -> None:
        """Store what the notifier holds, let attempts in flight finish briefly, then stop.

        An attempt cut off here was not recorded: its hold lapses and a sender (after a restart, or
        in another process) sends it again, with the same `webhook-id`.
        """
        await self._notifier.flush(_FLUSH_S)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._in_flight:
            _, unfinished = await asyncio.wait(set(self._in_flight), timeout=_FLUSH_S)
            for task in unfinished:
                task.cancel()
            if unfinished:
                await asyncio.gather(*unfinished, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            await self._pass()
            await self._bell.wait(self._pause_s())

    async def _pass(self) -> None:
        free = self._concurrency - len(self._in_flight)
        if free <= 0:
            return
        now = self._clock.now()
        while self._due and self._due[0] <= now:
            heapq.heappop(self._due)
        try:
            claimed = await self._deliver.claim(free)
        except Exception as exc:
            logger.warning("webhook_claim_failed", error=str(exc)[:200])
            return
        for delivery in claimed:
            task = asyncio.create_task(self._attempt(delivery), name=f"webhook-{delivery.id}")
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)

    async def _attempt(self, delivery: WebhookDelivery) -> None:
        try:
            updated = await self._deliver.attempt(delivery)
        except Exception as exc:
            # the outcome was not stored: the hold lapses and the delivery is attempted again
            logger.warning("webhook_attempt_not_stored", webhook_id=delivery.id, error=str(exc)[:200])
            return
        if updated.status is DeliveryStatus.PENDING:
            heapq.heappush(self._due, updated.next_attempt_at)
        self._bell.ring()  # a place is free (and a retry may be due): look again

    def _pause_s(self) -> float:
        if not self._due:
            return self._poll_s
        until_due = (self._due[0] - self._clock.now()).total_seconds()
        return max(0.0, min(self._poll_s, until_due))
