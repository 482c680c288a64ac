"""The notifier and the sender against an outbox whose store goes down: nothing is lost, nothing raises."""

import asyncio
from datetime import UTC, datetime

from agentkit.adapters.memory import InMemoryWebhookOutbox
from agentkit.adapters.system import SystemClock
from agentkit.adapters.webhooks import WebhookSender
from agentkit.application.backoff import Backoff
from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.webhook_transport import WebhookTransport
from agentkit.application.webhooks import DeliverWebhooks, DeliveryBell, WebhookNotifier, delivery_id
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.webhooks import AttemptOutcome, DeliveryStatus, RetryPolicy, WebhookDelivery
from tests.unit.application.store_doubles import DOWN

WAIT_S = 30.0


class OutageOutbox(InMemoryWebhookOutbox):
    """The in-memory outbox, down for the next `failing_adds` adds and `failing_claims` claims."""

    def __init__(self, *, failing_adds: int = 0, failing_claims: int = 0) -> None:
        super().__init__()
        self.failing_adds = failing_adds
        self.failing_claims = failing_claims

    async def add(self, delivery: WebhookDelivery) -> bool:
        if self.failing_adds:
            self.failing_adds -= 1
            raise StoreUnavailable(DOWN)
        return await super().add(delivery)

    async def claim_due(self, now: datetime, *, hold_until: datetime, limit: int) -> list[WebhookDelivery]:
        if self.failing_claims:
            self.failing_claims -= 1
            raise StoreUnavailable(DOWN)
        return await super().claim_due(now, hold_until=hold_until, limit=limit)


class RecordingTransport(WebhookTransport):
    """Answers with the given outcomes in turn (then 200) and records what it was asked to send."""

    def __init__(self, *outcomes: AttemptOutcome) -> None:
        self.outcomes = list(outcomes)
        self.sent: list[WebhookDelivery] = []

    async def post(self, delivery: WebhookDelivery, *, at: datetime) -> AttemptOutcome:
        self.sent.append(delivery)
        return self.outcomes.pop(0) if self.outcomes else AttemptOutcome(duration_ms=1, status_code=200)


def ended(status: str = "succeeded") -> Run:
    now = datetime.now(UTC)
    run = Run(id=RunId("r1"), owner=OwnerId("k"), goal="g", created_at=now, callback_url="https://hooks.example/")
    started = runs.start(run, now=now, lease_until=now)
    return runs.succeed(started, now=now, answer="a") if status == "succeeded" else started


def pieces(outbox: InMemoryWebhookOutbox, transport: WebhookTransport) -> tuple[WebhookNotifier, WebhookSender]:
    clock, bell = SystemClock(), DeliveryBell()
    notifier = WebhookNotifier(
        outbox=outbox, clock=clock, render=lambda run: {"id": run.id}, bell=bell, backoff=Backoff(first_s=0.01)
    )
    deliver = DeliverWebhooks(
        outbox=outbox,
        transport=transport,
        clock=clock,
        policy=RetryPolicy(max_attempts=3, first_delay_s=0.01, max_delay_s=0.02),
        hold_s=40,
    )
    return notifier, WebhookSender(deliver=deliver, notifier=notifier, bell=bell, clock=clock, poll_s=0.02)


async def stored(outbox: InMemoryWebhookOutbox, run: Run, status: DeliveryStatus) -> WebhookDelivery:
    async with asyncio.timeout(WAIT_S):
        while True:
            found = await outbox.of_run(run.id)
            if found and found[0].status is status:
                return found[0]
            await asyncio.sleep(0.005)


async def test_an_event_seen_while_the_store_is_down_is_stored_once_it_is_back_and_then_sent() -> None:
    outbox = OutageOutbox(failing_adds=2, failing_claims=2)
    transport = RecordingTransport()
    notifier, sender = pieces(outbox, transport)
    await sender.start()
    try:
        run = ended()
        notifier.on_run(run)  # returns at once: the run's path never waits for the store
        notifier.on_run(run)  # saved again unchanged: the same event, not a second delivery

        delivery = await stored(outbox, run, DeliveryStatus.DELIVERED)
    finally:
        await sender.stop()

    assert delivery.id == delivery_id(run)
    assert [d.id for d in transport.sent] == [delivery.id]
    assert (outbox.failing_adds, outbox.failing_claims) == (0, 0)


async def test_only_a_run_at_rest_with_a_callback_is_an_event() -> None:
    outbox = InMemoryWebhookOutbox()
    notifier, _ = pieces(outbox, RecordingTransport())

    notifier.on_run(ended("running"))
    await notifier.flush(1)

    assert await outbox.of_run(RunId("r1")) == []


async def test_a_transport_that_keeps_failing_ends_the_delivery_failed_with_every_attempt() -> None:
    failing = AttemptOutcome(duration_ms=1, error="the request failed: ConnectError", retryable=True)
    outbox = InMemoryWebhookOutbox()
    transport = RecordingTransport(failing, failing, failing)
    notifier, sender = pieces(outbox, transport)
    await sender.start()
    try:
        run = ended()
        notifier.on_run(run)
        delivery = await stored(outbox, run, DeliveryStatus.FAILED)
    finally:
        await sender.stop()

    assert len(delivery.attempts) == 3
    assert delivery.failure_reason == "gave up after 3 attempts; the last: the request failed: ConnectError"
    assert len(transport.sent) == 3
