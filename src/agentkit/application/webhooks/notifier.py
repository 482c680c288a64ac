"""WebhookNotifier: a run observer that turns a run's webhook events into stored deliveries."""

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

import msgspec
import structlog

from agentkit.application.backoff import Backoff, until_stored
from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.application.webhooks.bell import DeliveryBell
from agentkit.application.webhooks.events import delivery_id, event_type
from agentkit.domain.run import Run
from agentkit.domain.steps import Step
from agentkit.domain.webhooks import WebhookDelivery

logger = structlog.get_logger(__name__)

RunPayload = Callable[[Run], Any]
"""The run as the API shows it (GET /v1/runs/{id}), as JSON-ready builtins: the `data` of an event."""

# Events this process stored lately: a run saved again unchanged is not stored again (the store
# refuses a repeat anyway; this spares it the round trip).
_RECENT: Final = 4096
# How long storing one delivery is retried while the store is down (about what 8 tries took before).
_STORE_RETRY_S: Final = 30.0


class WebhookNotifier(RunObserver):
    """Hears every stored run; a run that needs an answer or has ended, with a callback URL, gets a delivery.

    Rules:
    - The events: the run entered `requires_action`, or reached its terminal status. Each is stored
      once (its id is derived from the run and the event), whichever process saw it first.
    - The URL is the run's `callback_url`, else the service's default (WEBHOOK_URL), else none is sent.
    - The body is fixed when the event happens: `{type, timestamp, data}`, `data` the run as the API
      shows it then; every retry sends the same bytes.
    - Storing happens off the run's path (`on_run` must not block): a store that is down is retried
      with backoff, and never slows or fails the run. The sender is woken once it is stored.

    Args:
        outbox: Where deliveries are stored.
        clock: The event's time.
        render: The run as the API shows it.
        bell: Rung when a delivery was stored.
        default_url: WEBHOOK_URL, for runs that name no callback of their own.
    """

    def __init__(
        self,
        *,
        outbox: WebhookOutbox,
        clock: Clock,
        render: RunPayload,
        bell: DeliveryBell,
        default_url: str | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self._outbox = outbox
        self._clock = clock
        self._render = render
        self._bell = bell
        self._default_url = default_url
        self._backoff = backoff or Backoff(first_s=0.2, cap_s=5.0)
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._pending: set[asyncio.Task[None]] = set()

    def on_run(self, run: Run) -> None:
        """Store a delivery for the run's event, if it has one and a URL to go to (in the background)."""
        event = event_type(run)
        if event is None:
            return
        url = run.callback_url or self._default_url
        if url is None:
            return
        key = delivery_id(run)
        if key in self._recent:
            return
        self._recent[key] = None
        while len(self._recent) > _RECENT:
            self._recent.popitem(last=False)
        now = self._clock.now()
        body = {"type": event, "timestamp": now, "data": self._render(run)}
        delivery = WebhookDelivery(
            id=key,
            run_id=run.id,
            owner=run.owner,
            event=event,
            url=url,
            payload=msgspec.json.encode(body).decode(),
            created_at=now,
            next_attempt_at=now,
        )
        task = asyncio.get_running_loop().create_task(self._store(delivery), name=f"webhook-store-{key}")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def on_step(self, step: Step) -> None:
        """Steps are no webhook events."""

    async def flush(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for the deliveries still being stored (at shutdown)."""
        if not self._pending:
            return
        _, unfinished = await asyncio.wait(set(self._pending), timeout=timeout_s)
        for task in unfinished:
            task.cancel()
        if unfinished:
            logger.warning("webhook_deliveries_not_stored", count=len(unfinished))
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*unfinished, return_exceptions=True)

    async def _store(self, delivery: WebhookDelivery) -> None:
        try:
            added = await until_stored(
                lambda: self._outbox.add(delivery),
                what="webhook_delivery",
                deadline=self._clock.monotonic() + _STORE_RETRY_S,
                clock=self._clock,
                sleep=asyncio.sleep,
                backoff=self._backoff,
            )
        except StoreUnavailable as exc:
            logger.error("webhook_lost", run_id=delivery.run_id, webhook_id=delivery.id, error=str(exc))
            self._recent.pop(delivery.id, None)  # a later save of the run may store it yet
            return
        except Exception:
            logger.exception("webhook_store_failed", run_id=delivery.run_id, webhook_id=delivery.id)
            self._recent.pop(delivery.id, None)
            return
        if added:
            logger.info("webhook_queued", run_id=delivery.run_id, webhook_id=delivery.id, type=delivery.event)
        self._bell.ring()
